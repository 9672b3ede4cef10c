"""The study configuration a command's parsed flags ask for: every command that runs failure tasks
(``overlap``, ``run``, ``h2g``, ``h2j``) builds its :class:`pipeline.study.config.StudyConfig` here,
once, from the collection options, the hard-set quantile, the LLM-call options and the flags it has
among :data:`OPTION_FLAGS`."""
from __future__ import annotations

from pipeline.cli.args import llm_options
from pipeline.study.config import StudyConfig

# StudyConfig fields set by a flag of the same name, where a command has that flag
OPTION_FLAGS = ("encoder", "aggregate", "cap", "max_queries", "partial_references", "universe", "truncated_answers")


def study_config(args, **components) -> StudyConfig:
    """``args`` (a namespace of ``collection_args`` and ``llm_args`` and some of :data:`OPTION_FLAGS`) and
    the command's ``components`` (``retrievers=``, ``generators=``, ``judges=``, ``setups=``) as one
    configuration."""
    given = vars(args)
    options = {name: given[name] for name in OPTION_FLAGS if name in given}
    return StudyConfig(dataset=args.dataset, data_dir=args.data, qrels=args.qrels, topics=args.topics,
                       passages=args.passages, quantile=args.quantile, llm_options=llm_options(args),
                       **options, **components)

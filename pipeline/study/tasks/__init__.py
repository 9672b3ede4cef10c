"""The study's failure tasks, one module each, every one a :class:`pipeline.study.task.FailureTask`:
``h2r`` (retrieval: nDCG@10), ``h2g`` (generation: BERTScore F1), ``h2j`` (judgment: disagreement with
NIST). Each wraps its stage package's computation (``pipeline.retrieval``, ``pipeline.generation``,
``pipeline.judging``) and resolves its components' ``NAME[=FILE]`` forms; the study composes them
(``pipeline.study.run.STUDY_TASKS``). A further task is one new module (anywhere): its class registers
itself and a configuration names its systems (``StudyConfig.further_tasks``; :mod:`pipeline.study.task`).
"""

"""Zero-shot answer generation per query (the H2G side of the failure study), and imported answers.

A :class:`Generation` is one generator's answers for one dataset, stored with what made them: the
model's provenance, the prompt template and the decoding options (or, for imported answers, the
file they came from). Generated answers come through a :class:`~pipeline.llm.base.ChatClient`, so
a rerun is served from the response cache and an interrupted run resumes where it stopped; a query
whose call failed is listed in ``failed`` (never given an empty answer) and is retried next time. An
empty reply, or one cut off while the model was still reasoning, is such a failure
(``pipeline.llm.replies``). Every answer's finish reason (``stop``; ``length`` when it was cut at
``max_tokens``) is kept in ``finish_reasons``.

Imported answers: a JSONL file of ``{"qid": ..., "text": ...}`` lines, given on the command line as
``--generator NAME=FILE.jsonl`` (e.g. a study's llama3.2:3b answers made on a GPU server).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Mapping

from pipeline.data.jsonl import records
from pipeline.llm.base import ChatClient, GenerationOptions, LLMError, Message

ZERO_SHOT_SYSTEM = "You are a knowledgeable assistant. Answer questions accurately and concisely."
ZERO_SHOT_USER = ("Answer the following question in a short paragraph of two to four sentences, using "
                  "your own knowledge.\n\nQuestion: {query}\nAnswer:")
# Answers of a few sentences, like the study's. The limit is one at which a normal answer finishes
# (finish reason stop) with room to spare: bench/bench_answer_length.py measures the answers' lengths
# (docs/failure-guide.md, "Answer length"); an answer that still reaches it is counted and left out of H2G
# (pipeline.generation.h2g). A normal answer stops early, so the limit costs only runaway answers.
GENERATION_OPTIONS = GenerationOptions(temperature=0.0, seed=0, max_tokens=256)


class AnswersFormatError(ValueError):
    """A malformed answers file; the message names file, line and problem."""

    def __init__(self, path, line_no: int, message: str):
        super().__init__(f"{path}:{line_no}: {message}")


def zero_shot_messages(query: str) -> list[Message]:
    """The study's zero-shot prompt for one query: no passages, the model answers from memory."""
    return [{"role": "system", "content": ZERO_SHOT_SYSTEM},
            {"role": "user", "content": ZERO_SHOT_USER.format(query=query.strip())}]


def prompt_description() -> dict:
    """The prompt template as stored with every generation."""
    return {"kind": "zero-shot", "system": ZERO_SHOT_SYSTEM, "user": ZERO_SHOT_USER}


@dataclass
class Generation:
    """One generator's answers: ``answers[qid]`` is the text; ``failed[qid]`` the last error;
    ``finish_reasons[qid]`` why the model stopped (``unknown`` when the backend cannot tell; none for imported answers);
    ``not_generated[qid]`` why a judged query was not asked (H2G could not score it: ``pipeline.generation.h2g``)."""
    name: str
    provenance: dict  # Provenance.as_dict(), or {"backend": "imported", ...}
    answers: dict[str, str]
    prompt: dict | None = None
    options: dict | None = None
    failed: dict[str, str] = field(default_factory=dict)
    source: str = ""
    finish_reasons: dict[str, str | None] = field(default_factory=dict)
    not_generated: dict[str, str] = field(default_factory=dict)  # absent from generations stored before it

    @property
    def small_model(self) -> bool:
        return bool(self.provenance.get("small"))

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Generation":
        return cls(**data)


def generate_answers(client: ChatClient, queries: Mapping[str, str], *, name: str | None = None,
                     options: GenerationOptions = GENERATION_OPTIONS, progress: str | None = None,
                     on_progress=None) -> Generation:
    """Answer every query zero-shot through ``client`` (cached, concurrent, failures kept apart).

    Named ``backend:model`` of the resolved model unless ``name`` is given; the options recorded are
    the ones sent (the client's overrides applied). :class:`~pipeline.llm.base.LLMUnavailable`
    propagates (the step stops); when every call failed, :class:`LLMError` says so: a generation
    without a single answer is a failed step, not a result. ``on_progress(n)``: see
    :meth:`pipeline.llm.base.ChatClient.chat_many`."""
    options = client.effective_options(options)
    qids = list(queries)
    replies = client.chat_many([zero_shot_messages(queries[qid]) for qid in qids], options, progress=progress,
                               on_progress=on_progress)
    answers, failed, finish = {}, {}, {}
    for qid, reply in zip(qids, replies):
        if isinstance(reply, LLMError):
            failed[qid] = str(reply)
        else:
            answers[qid] = reply.text
            finish[qid] = reply.finish_reason
    prov = client.provenance
    if qids and not answers:
        first = next(iter(failed.values()))
        raise LLMError(f"{prov.label}: all {len(qids)} generation calls failed; the first: {first}", retryable=False)
    return Generation(name=name or f"{prov.backend}:{prov.model}", provenance=prov.as_dict(), answers=answers,
                      prompt=prompt_description(), options=options.as_dict(), failed=failed,
                      source=f"generated by {prov.label}", finish_reasons=finish)


def read_answers_jsonl(path: str | Path, known_qids: Mapping | None = None) -> dict[str, str]:
    """``{qid: text}`` from a JSONL file; errors name file and line. Unknown or repeated qids are errors."""
    path = Path(path)
    answers: dict[str, str] = {}
    for line_no, record in records(path, ("qid", "text"), AnswersFormatError):
        qid, text = str(record["qid"]), record["text"]
        if not isinstance(text, str):
            raise AnswersFormatError(path, line_no, f'"text" must be a string, got {type(text).__name__}')
        if qid in answers:
            raise AnswersFormatError(path, line_no, f"query {qid} appears twice")
        if known_qids is not None and qid not in known_qids:
            raise AnswersFormatError(path, line_no, f"query {qid} is not a topic of this dataset")
        answers[qid] = text
    if not answers:
        raise AnswersFormatError(path, 0, "no answers in file")
    return answers


def import_answers(name: str, path: str | Path, known_qids: Mapping | None = None) -> Generation:
    """Answers made elsewhere, as the generator ``name``."""
    answers = read_answers_jsonl(path, known_qids)
    return Generation(name=name, provenance={"backend": "imported", "model": name, "small": False,
                                             "note": f"answers imported from {path}", "label": f"imported:{name}"},
                      answers=answers, source=f"imported from {Path(path).resolve()}")

"""Scripted inputs shared by the preference tests: a tiny DL19-shaped dataset, hand-assigned reasons,
a scripted generator and a scripted judge whose verdicts are fixed per query."""
from __future__ import annotations

import re

from pipeline.prompting import difficulty
from pipeline.data.datasets import DATASETS, TrecDlData
from pipeline.typology.categories import Assignment, load_typology
from pipeline.llm import CachedClient, Provenance, ResponseCache, ScriptedBackend

HOSTILE = "what is a <b>prism</b> <script>alert('x')</script> & more"
TYPOLOGY = load_typology()
TEMPLATES = difficulty.load_templates()
NUMERICAL, PRODUCT, RECENT = "Numerical data requirements", "Specific product terminology", "Need for recent information"


def client(respond, model="scripted", small=False, cache_path=None) -> CachedClient:
    """The ChatClient the steps receive: a scripted backend behind the response cache (a private one
    at ``cache_path``, else the session's). ``client.backend.calls`` lists the calls that reached it."""
    backend = ScriptedBackend(respond, provenance=Provenance("scripted", model, small=small))
    return CachedClient(backend, ResponseCache(cache_path) if cache_path else None, retries=0)


def data() -> TrecDlData:
    topics = {"q1": "how many moons has mars", "q2": "iphone 12 battery life", "q3": "who is the president",
              "q4": HOSTILE, "q5": "no relevant text here", "q9": "unjudged"}
    qrels = {q: {f"r{q}": 3, f"h{q}": 2, f"m{q}": 1, f"n{q}": 0} for q in ("q1", "q2", "q3", "q4")}
    qrels["q5"] = {"rq5": 3}
    passages = {f"{p}{q}": f"passage {p} of {q} " + "word " * 5 for q in ("q1", "q2", "q3", "q4")
                for p in ("r", "h", "m", "n")}
    passages["rq1"] = "Mars has two moons, Phobos and Deimos. " + "More detail. " * 100
    return TrecDlData(spec=DATASETS["dl19"], topics=topics, qrels=qrels, passages=passages, source="test")


def hand(qid: str, task: str, *names: str) -> Assignment:
    """A hand-made assignment of the study's categories called ``names`` (no justification)."""
    return Assignment(qid, task, [(TYPOLOGY.find(name, task), "") for name in names], source="hand")


def assignments():
    return [hand("q1", "h2r", NUMERICAL, PRODUCT), hand("q2", "h2r", PRODUCT), hand("q3", "h2g", RECENT),
            hand("q4", "h2r", NUMERICAL), hand("q5", "h2r", NUMERICAL), hand("q9", "h2r", NUMERICAL)]


def generate(messages):
    user = messages[-1]["content"]
    query = re.search(r"Question: (.*)", user).group(1)
    kind = "aware" if "This query" in user else "base"
    return f"{kind} answer to {query}"


def responses(user: str) -> tuple[str, str]:
    a = re.search(r"Response A:\n(.*?)\n\nResponse B:", user, re.S).group(1)
    b = re.search(r"Response B:\n(.*?)\n\nWhich", user, re.S).group(1)
    return a, b


def judge(messages):
    """q1: content prefers aware; q2: always 'A' (position bias); q3: prefers baseline; q4: garbage once."""
    user = messages[-1]["content"]
    a, b = responses(user)
    aware_letter = "A" if a.startswith("aware") else "B"
    base_letter = "B" if aware_letter == "A" else "A"
    if "moons" in user:
        return f"Response {aware_letter} is better."
    if "iphone" in user:
        return "A"
    if "president" in user:
        return f"[[{base_letter}]]"
    if "prism" in user:
        return "I cannot tell." if aware_letter == "A" else "B"
    raise AssertionError(user)




def stored_result(small_judge: bool = False) -> dict:
    """Run the scripted experiment and store it in the current cache (as the CLI would)."""
    from pipeline.prompting import preference

    generator = client(generate, "generator")
    result = preference.run_preference(data(), assignments(), TYPOLOGY, TEMPLATES,
                                       client(judge, "tiny-judge", small=small_judge),
                                       preference.AnswerSide(generator), preference.AnswerSide(generator))
    preference.save_result(result)
    return result


def dl19_folder(tmp_path):
    """:func:`data` written as a ``dl19`` data folder (topics, qrels, passages) for CLI tests."""
    d = data()
    folder = tmp_path / "trec_dl"
    folder.mkdir()
    (folder / "topics.dl19-passage.txt").write_text("".join(f"{q}\t{t}\n" for q, t in d.topics.items()))
    (folder / "qrels.dl19-passage.txt").write_text(
        "".join(f"{q} 0 {p} {g}\n" for q, judged in d.qrels.items() for p, g in judged.items()))
    (folder / "passages.msmarco-v1.dl19-dl20.tsv").write_text("".join(f"{p}\t{t}\n" for p, t in d.passages.items()))
    return folder

"""Difficulty-aware judging against a loopback Ollama server whose judge has a planted effect: the expected
per-query disagreements are worked out by hand from the plant, the Wilcoxon statistic and p with scipy and
the κ change with sklearn directly, and the stored result must reproduce them exactly; a rerun makes no
request; bad input is refused naming the flag or file, with nothing stored.

Two plants (issue 40 item 6): the sentence's content helps (the control sentence moves no label), and any
sentence helps (the control sentence moves the labels exactly as the difficulty sentence does). The second
must read "no effect beyond the control sentence" in the primary comparison while aware vs baseline is
significant: the baseline comparison cannot tell the two plants apart, the primary one can."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest
from scipy.stats import wilcoxon
from sklearn.metrics import cohen_kappa_score

from statsmodels.stats.multitest import multipletests

from core.findings import FAILS, HOLDS, INCONCLUSIVE
from pipeline.aware import judge as study, store
from pipeline.cli import main
from pipeline.prompting import difficulty
from tests.support.loopback_llm import LoopbackLLMServer

MODEL = "judge8b"
QIDS = [f"q{i:02d}" for i in range(1, 45)]  # 44 judged queries: H2J's target is floor(43 * 0.25) + 1 = 11
GRADES = {"a": 3, "b": 2, "c": 1, "d": 0}  # each query's four judged passages, by NIST grade
# the plant (baseline = UMBRELA's prompt): q01-q05 mislabel c and d as 3 (disagreement 2/4), q06-q11 mislabel d
# (1/4), every other query agrees with NIST -> H2J = q01-q11 in both setups (3 vs 0 and 3 vs 1 disagree in both)
BASELINE_WRONG = {**{q: ("c", "d") for q in QIDS[:5]}, **{q: ("d",) for q in QIDS[5:11]}}
FIXED_BY_SENTENCE = set(QIDS[:8])  # the difficulty sentence fixes q01-q08; q09, q10 stay as they were
REASONED = QIDS[:10]  # q11 gets no reason: excluded and counted
# on a query that is not hard, the difficulty sentence makes the judge call c a 3 when the query's number is even
EVEN = {q for q in QIDS if int(q[1:]) % 2 == 0}
DIFFICULTY = set(difficulty.load_templates().sentences.values())  # the difficulty sentences; any other: control
MAKER = "reasons-llm"  # the reasons FILE's maker, named and sized (a FILE is otherwise of unknown size)


def respond(body, control_moves: bool = False) -> str:
    """The plant; ``control_moves``: the control sentence moves every label the difficulty sentence moves."""
    user = body["messages"][-1]["content"]
    qid = re.search(r"Query: query (q\d+)", user).group(1)
    block = re.search(r"Query: .*?\n(.*?)Passage: passage ([abcd]) ", user, re.S)
    sentence, letter = block.group(1).strip(), block.group(2)
    grade = GRADES[letter]
    moved = sentence in DIFFICULTY or (control_moves and bool(sentence))
    if qid in BASELINE_WRONG and letter in BASELINE_WRONG[qid] and not (moved and qid in FIXED_BY_SENTENCE):
        grade = 3
    if moved and qid not in BASELINE_WRONG and qid in EVEN and letter == "c":
        grade = 3
    return json.dumps({"M": grade, "T": grade, "O": grade})


def write_folder(folder):
    folder.mkdir()
    (folder / "topics.dl19-passage.txt").write_text("".join(f"{q}\tquery {q} about topic {q}\n" for q in QIDS)
                                                    + "q99\tunjudged\n")
    (folder / "qrels.dl19-passage.txt").write_text("".join(f"{q} 0 {x}{q} {g}\n" for q in QIDS
                                                           for x, g in GRADES.items()))
    (folder / "passages.msmarco-v1.dl19-dl20.tsv").write_text(
        "pid\tjudged_in\ttext\n" + "".join(f"{x}{q}\tdl19\tpassage {x} of {q} with some words\n"
                                           for q in QIDS for x in GRADES))
    reasons = folder / "reasons.jsonl"
    reasons.write_text("".join(json.dumps({"qid": q, "task": "h2j", "categories": [
        "Quantitative data needs" if i < 5 else "Specific or niche topics"]}) + "\n" for i, q in enumerate(REASONED)))
    return reasons


def chat_posts(server) -> int:
    return sum(path == "/api/chat" for path, _ in server.requests)


def expected_disagreement(qid: str, arm: str, control_moves: bool = False) -> float:
    wrong = set(BASELINE_WRONG.get(qid, ()))
    moved = arm == "aware" or (control_moves and arm == "control_sentence")
    if moved and qid in FIXED_BY_SENTENCE:
        wrong = set()
    if moved and qid not in BASELINE_WRONG and qid in EVEN:
        wrong = {"c"}
    return len(wrong) / 4


@pytest.fixture
def planted(tmp_path, monkeypatch):
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    reasons = write_folder(tmp_path / "data")
    with LoopbackLLMServer(models=[MODEL], parameter_sizes={MODEL: "8.0B"}) as server:
        server.responders[MODEL] = respond
        argv = ["aware-judge", "--dataset", "dl19", "--data", str(tmp_path / "data"), "--judge",
                f"ollama:{MODEL}@{server.url}", "--reasons", str(reasons), "--reasons-model", MAKER,
                "--model-size", f"{MAKER}=8B", "--json"]
        yield server, argv


def run_cli(capsys, argv) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_planted_effect_is_reproduced_exactly_and_a_rerun_makes_no_call(planted, capsys):
    server, argv = planted
    out = run_cli(capsys, argv)
    result = store.load_result(study.KIND, out["path"], study.RESULT_VERSION)
    posts = chat_posts(server)
    assert result["excluded"]["hard, no assigned reason"] == ["q11"]
    # the control draw: 10 per setup from the 33 queries hard in neither setup, one seeded RNG, binary first
    candidates = QIDS[11:]
    rng = np.random.default_rng(0)
    for setup in ("binary", "graded"):
        sets = result["sets"][setup]
        assert sets["hard"] == QIDS[:11] and sets["hard_used"] == REASONED
        drawn = set(rng.choice(len(candidates), size=10, replace=False).tolist())
        assert sets["control"] == [q for i, q in enumerate(candidates) if i in drawn]
    controls = set(result["sets"]["binary"]["control"]) | set(result["sets"]["graded"]["control"])
    # baseline over every pair of the 44 queries, then two arms over the hard and control queries' pairs
    assert posts == 44 * 4 + 2 * 4 * (len(REASONED) + len(controls))
    by_qid = {r["qid"]: r for r in result["queries"]}
    statements = difficulty.load_statements()
    for record in by_qid.values():  # the control sentence: a whole neutral statement of as many words
        assert len(record["control_sentence"].split()) == len(record["sentence"].split())
        assert record["control_sentence"] == statements.matching(record["sentence"])
        assert record["control_sentence"] not in DIFFICULTY
    for q in result["sets"]["binary"]["control"]:  # controls borrow a hard query's sentence
        assert by_qid[q]["sentence"] == by_qid[by_qid[q]["sentence_from"]]["sentence"]
        assert by_qid[q]["sentence_from"] in REASONED

    verdicts = {v["scope"]: v for v in result["verdicts"]}
    for setup in ("binary", "graded"):
        family = result["comparisons"][setup]
        for (group, before, after) in study.COMPARISONS:
            name = study.comparison_name(group, before, after)
            c = family[name]
            members = result["sets"][setup]["hard_used" if group == "hard" else "control"]
            change = [expected_disagreement(q, after) - expected_disagreement(q, before) for q in members]
            assert c["n"] == len(members) and c["qids"] == sorted(members)
            assert c["mean_change"] == pytest.approx(float(np.mean(change)), abs=1e-12)
            nonzero = [d for d in change if d != 0]
            if nonzero:  # scipy directly, on the same nonzero changes: the same floats
                expected = wilcoxon([d for q, d in sorted(zip(members, change)) if d != 0])
                assert c["wilcoxon"]["statistic"] == float(expected.statistic)
                assert c["wilcoxon"]["p"] == float(expected.pvalue)
            else:
                assert c["wilcoxon"]["p"] is None
            # κ with sklearn directly, over the group's pairs (both arms labelled every pair here)
            nist, b, a = [], [], []
            for q in members:
                for pair in by_qid[q]["pairs"]:
                    cut = (lambda g: int(g >= 2)) if setup == "binary" else int
                    nist.append(cut(pair["nist"]))
                    b.append(cut(pair["labels"][before]))
                    a.append(cut(pair["labels"][after]))
            kb, ka = cohen_kappa_score(nist, b), cohen_kappa_score(nist, a)
            assert c["kappa"]["kappa_before"] == kb and c["kappa"]["kappa_after"] == ka
            assert c["kappa"]["change"] == ka - kb
            if ka != kb:
                low, high = c["kappa"]["interval"]
                assert low <= high
        for record in result["queries"]:  # the control sentence changes no label
            assert all(p["labels"]["control_sentence"] == p["labels"]["baseline"] for p in record["pairs"])
        hard_aware = family["hard: aware vs baseline"]
        assert (hard_aware["improved"], hard_aware["unchanged"], hard_aware["worsened"]) == (8, 2, 0)
        raw = [family[n]["wilcoxon"]["p"] for n in family if family[n]["wilcoxon"]["p"] is not None]
        assert len(raw) == 3  # the control sentence changed nothing: no test in its two comparisons
        # Holm over the declared family of five (issue 40 item 5): a comparison without a p still counts
        assert list(family) == list(study.FAMILY) and study.FAMILY[0] == study.PRIMARY == "hard: aware vs control_sentence"
        expected = multipletests([1.0 if family[n]["wilcoxon"]["p"] is None else family[n]["wilcoxon"]["p"]
                                  for n in study.FAMILY], method="holm")[1]
        assert [family[n]["p_holm"] for n in study.FAMILY] == pytest.approx(list(expected), rel=1e-12)
        assert hard_aware["p_holm"] == pytest.approx(5 * hard_aware["wilcoxon"]["p"], rel=1e-12)  # 0.039, not 0.0234
        assert verdicts[f"{setup} · hard: aware vs baseline"]["verdict"] == HOLDS
        primary = verdicts[f"{setup} · {study.PRIMARY}"]
        assert primary["verdict"] == HOLDS and primary["reason"].startswith("an effect beyond the control sentence")
        assert verdicts[f"{setup} · {study.INTERACTION}"]["verdict"] == HOLDS  # hard queries gain, controls lose
        assert verdicts[f"{setup} · hard: aware vs control_sentence"]["verdict"] == HOLDS
        assert verdicts[f"{setup} · control: aware vs baseline"]["verdict"] == FAILS
        assert verdicts[f"{setup} · hard: control_sentence vs baseline"]["verdict"] in (INCONCLUSIVE, FAILS)
    assert result["gates"] == [] and "8B" in verdicts["binary · hard: aware vs baseline"]["headline"]
    # the stored example prompts: the sentence on its own line after the query line, nothing else changed
    diff = study.example_diff(result).splitlines()
    assert [line for line in diff if not line.startswith("  ")] == ["+ " + by_qid[result["example"]["qid"]]["sentence"]]

    assert list(out)[:4] == ["dataset", "id", "path", "primary"] and out["primary"] == study.PRIMARY
    assert main(argv[:-1]) == 0  # the text report, from the cache: the primary comparison first
    text = capsys.readouterr().out
    assert "binary · hard: aware vs baseline: holds · n = 10" in text and f"stored: {out['path']}" in text
    assert text.index(f"binary · {study.PRIMARY}: holds") < text.index("binary · hard: aware vs baseline")
    assert "regresses toward the mean" in " ".join(text.split())  # wrapped at 100 columns
    note = text[text.index("  primary comparison"):text.index(f"  binary · {study.PRIMARY}")]
    assert max(len(line) for line in note.splitlines()) <= 100
    again = run_cli(capsys, argv)
    assert chat_posts(server) == posts  # every reply from the response cache
    assert again["id"] == out["id"] and again["comparisons"] == out["comparisons"]
    listed = run_cli(capsys, ["aware-judge", "--list", "--json"])
    assert [r["id"] for r in listed["results"]] == [out["id"]]


def test_a_control_sentence_that_moves_labels_as_much_reads_no_effect_beyond_the_control(planted, capsys):
    """Any extra sentence fixes the hard queries: aware vs baseline is significant (8 of 10 improve), yet the
    primary comparison reads "no effect beyond the control sentence" and the interaction does not hold."""
    server, argv = planted
    server.responders[MODEL] = lambda body: respond(body, control_moves=True)
    out = run_cli(capsys, argv)
    result = store.load_result(study.KIND, out["path"], study.RESULT_VERSION)
    verdicts = {v["scope"]: v for v in result["verdicts"]}
    for setup in ("binary", "graded"):
        family = result["comparisons"][setup]
        members = result["sets"][setup]["hard_used"]
        for name, arm in (("hard: aware vs baseline", "aware"), ("hard: control_sentence vs baseline",
                                                                  "control_sentence")):
            change = [expected_disagreement(q, arm, True) - expected_disagreement(q, "baseline") for q in members]
            assert family[name]["mean_change"] == pytest.approx(float(np.mean(change)), abs=1e-12)
            assert verdicts[f"{setup} · {name}"]["verdict"] == HOLDS  # Holm over five: 5 x 2/2^8 = 0.039
        primary = verdicts[f"{setup} · {study.PRIMARY}"]
        assert family[study.PRIMARY]["improved"] == family[study.PRIMARY]["worsened"] == 0
        assert primary["verdict"] == FAILS and primary["reason"].startswith("no effect beyond the control sentence")
        assert verdicts[f"{setup} · {study.INTERACTION}"]["verdict"] == FAILS
    assert main(argv[:-1]) == 0
    text = capsys.readouterr().out
    assert f"binary · {study.PRIMARY}: does not hold (no effect beyond the control sentence" in text


def test_bad_reasons_and_flags_are_refused_naming_them_with_nothing_stored(planted, capsys, tmp_path):
    server, argv = planted
    at = argv.index("--reasons") + 1
    with pytest.raises(SystemExit) as exc:
        main(argv[:at] + [str(tmp_path / "absent.jsonl")] + argv[at + 1:])
    assert exc.value.code == 2 and "--reasons" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"qid": "q01", "task": "h2j", "categories": ["Made-up reason"]}) + "\n")
    assert main(argv[:at] + [str(bad)] + argv[at + 1:]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl:1" in err and "Made-up reason" in err
    for flag, value in (("--cap", "0"), ("--quantile", "1.5"), ("--max-queries", "-1"), ("--control-seed", "x")):
        with pytest.raises(SystemExit) as exc:
            main(argv + [flag, value])
        assert exc.value.code == 2 and flag in capsys.readouterr().err
    assert main(["aware-judge", "--json"]) == 2 and "--dataset" in capsys.readouterr().err
    assert main(argv + ["--assigner", "embedded"]) == 2 and "--assigner" in capsys.readouterr().err
    no_reasons = argv[:at - 1] + argv[at + 1:]  # --reasons-model names the model behind --reasons: needs it
    assert main(no_reasons) == 2 and "--reasons-model" in capsys.readouterr().err
    assert chat_posts(server) == 0 and store.list_results(study.KIND) == []


def test_a_judge_that_labels_nothing_fails_the_command_with_nothing_stored(planted, capsys):
    server, argv = planted
    server.responders[MODEL] = lambda body: "I cannot judge this."
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "labelled none of 176 baseline pairs" in err and "I cannot judge this." in err
    assert store.list_results(study.KIND) == []


def test_kappa_interval_is_the_bootstrap_over_queries_recomputed_with_sklearn():
    """kappa_change's interval: queries resampled with the rule's seed, both κ recomputed on the resample's
    pooled pairs (here with sklearn, one call per resample and arm), percentiles of the changes."""
    rng = np.random.default_rng(7)
    items = {f"q{i}": [tuple(int(g) for g in rng.integers(0, 4, 3)) for _ in range(4)] for i in range(12)}
    rule = {**study.paired.RULE, "resamples": 300}
    got = study.kappa_change(items, "graded", rule)
    qids = list(items)
    draws = np.random.default_rng(rule["seed"]).integers(0, len(qids), size=(rule["resamples"], len(qids)))
    changes = []
    for row in draws:
        rows = [r for i in row for r in items[qids[i]]]
        nist = [r[0] for r in rows]
        changes.append(cohen_kappa_score(nist, [r[2] for r in rows]) - cohen_kappa_score(nist, [r[1] for r in rows]))
    assert got["undefined_resamples"] == 0
    assert got["interval"] == pytest.approx([np.percentile(changes, 2.5), np.percentile(changes, 97.5)], abs=1e-12)
    rows = [r for q in qids for r in items[q]]
    assert got["change"] == cohen_kappa_score([r[0] for r in rows], [r[2] for r in rows]) - cohen_kappa_score(
        [r[0] for r in rows], [r[1] for r in rows])


def test_the_baseline_is_the_study_judges_requests_so_its_replies_are_cache_hits(planted, capsys):
    server, argv = planted
    data_at = argv.index("--data") + 1
    h2j = run_cli(capsys, ["h2j", "--dataset", "dl19", "--data", argv[data_at],
                           "--judge", argv[argv.index("--judge") + 1], "--json"])
    assert h2j["binary"]["h2j"] == QIDS[:11]
    asked = chat_posts(server)
    assert asked == 44 * 4  # one graded reply per pair serves both setups
    out = run_cli(capsys, argv)
    rejudged = len(out["sets"]["binary"]["hard_used"]) + len(set(out["sets"]["binary"]["control"])
                                                             | set(out["sets"]["graded"]["control"]))
    assert chat_posts(server) - asked == 2 * 4 * rejudged  # the arms only: every baseline reply was a hit


def test_reasons_from_the_typology_store_give_the_same_sentences(planted, capsys):
    """``--reasons typology``: the dataset's finished h2j typology run (its categories and assignments)."""
    from pipeline.typology.categories import Assignment, load_typology
    from pipeline.typology.induction import HardQuery
    from pipeline.typology.store import TypologyStore, default_path

    server, argv = planted
    typology = load_typology()
    quantitative = typology.find("Quantitative data needs", "h2j")
    with TypologyStore(default_path()) as typologies:
        typologies.start_run("dl19-h2j", dataset="dl19", task="h2j", source="study", typology_label="study",
                             hard_set={}, config={}, provenance={"label": "ollama:qwen3:8b"},
                             queries=[HardQuery(q, f"query {q}", "") for q in QIDS[:11]])
        typologies.save_typology("dl19-h2j", list(typology.for_task("h2j")), "unchanged")
        typologies.save_assignments("dl19-h2j", [Assignment(q, "h2j", [(quantitative, "")], "ok") for q in REASONED]
                                    + [Assignment("q11", "h2j", [], "unparseable", raw="???")])
    at = argv.index("--reasons") + 1
    argv = argv[:argv.index("--reasons-model")] + argv[argv.index("--model-size") + 2:]  # the store's model
    out = run_cli(capsys, argv[:at] + ["typology"] + argv[at + 1:])
    result = store.load_result(study.KIND, out["path"], study.RESULT_VERSION)
    assert result["reasons"]["how"]["typology_store"]["h2j"]["run_id"] == "dl19-h2j"
    assert result["excluded"]["hard, no assigned reason"] == ["q11"]
    hard = [r for r in result["queries"] if r["sentence_from"] == r["qid"]]
    assert [r["qid"] for r in hard] == REASONED
    assert {r["sentence"] for r in hard} == {"This query asks for quantitative data."}
    # the store's run names its model but not its size: its reasons gate every verdict
    assert result["gates"] == ["reasons' model (typology store) is a model of unknown size (state it to count its "
                               "output)"]
    assert all(v["verdict"] == "inconclusive" and result["gates"][0] in v["reason"] for v in result["verdicts"])


def test_reasons_that_name_no_hard_query_are_refused_with_nothing_stored(planted, capsys, tmp_path):
    server, argv = planted
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"qid": "q30", "task": "h2j", "categories": ["Quantitative data needs"]}) + "\n")
    at = argv.index("--reasons") + 1
    assert main(argv[:at] + [str(other)] + argv[at + 1:]) == 2
    err = capsys.readouterr().err
    assert "none of the 11 H2J queries" in err and "other.jsonl" in err
    assert chat_posts(server) == 44 * 4 and store.list_results(study.KIND) == []  # the baseline only, nothing stored

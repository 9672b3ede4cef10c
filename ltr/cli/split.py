"""``split``: cross-validate one LETOR file by query into a LETOR folder (``FoldK/{train,vali,test}.txt``), the
same split ``--data FILE.txt:folds=F,seed=S`` trains on (:mod:`ltr.data.crossval`)."""
from __future__ import annotations

import json
from pathlib import Path

from core import cli


def cmd_split(args) -> int:
    from core.errors import DatasetError
    from ltr.data.crossval import MARKER, write_letor_folds
    from ltr.data.letor import LetorFormatError

    try:
        out = write_letor_folds(args.file, args.out, folds=args.folds, seed=args.seed)
    except (DatasetError, LetorFormatError) as exc:
        raise cli.InputError(" ".join(str(exc).split())) from None
    record = json.loads((Path(out) / MARKER).read_text(encoding="utf-8"))
    if args.json:
        cli.print_json({"out": str(out), **record})
    else:
        print(f"{out}: {record['folds']} folds of {record.get('queries', '?')} queries from {record['source']} "
              f"(seed {record['seed']}, queries per part {record.get('queries_per_part')})")
    return cli.EXIT_OK


def _arguments(p) -> None:
    p.add_argument("file", type=cli.existing_file, help="a LETOR / SVMlight file (label qid:Q i:v ...)")
    p.add_argument("--folds", type=cli.number(int, 3, what="an integer >= 3"), default=5,
                   help="parts, and so folds (default 5: three parts train, one validates, one tests)")
    p.add_argument("--seed", type=cli.seed, default=0, help="seed of the query permutation (default 0)")
    p.add_argument("--out", required=True, help="the LETOR folder to write (new or empty)")
    cli.json_arg(p, help="print the split's record (source, sha256, folds, seed, queries per part) as JSON")


COMMANDS = (cli.Command("split", "cross-validate one LETOR file by query into a LETOR folder (FoldK/)",
                        _arguments, cmd_split),)

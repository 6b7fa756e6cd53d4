"""A stand-in for the part of polars that Ultralytics' training uses, for the GPU machine only.

The device tool's GPU machine lacks polars, and polars' runtime wheel (54 MB) does not fit
beside the data in one call's 64 MiB. Ultralytics' trainer uses polars only to read back its
own ``results.csv`` (``read_csv(...).to_dict(as_series=False)``) and to turn metric summaries
into CSV (``DataFrame(rows).write_csv()``); the standard library does both here.
``train_gpu.sh`` puts this folder on ``PYTHONPATH`` only when ``import polars`` fails; the
app and the CPU training never import it.

>>> read_csv(b"epoch,loss\\n1,0.5\\n2,0.25\\n", infer_schema_length=None).to_dict(as_series=False)
{'epoch': [1, 2], 'loss': [0.5, 0.25]}
>>> DataFrame([{"a": 1, "b": "x"}]).write_csv()
'a,b\\n1,x\\n'
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from typing import Any


def _value(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


class DataFrame:
    """The few DataFrame methods Ultralytics calls, over columns of plain lists."""

    def __init__(self, data: Mapping[str, Iterable[Any]] | Iterable[Mapping[str, Any]] | None = None) -> None:
        if data is None:
            self.columns: dict[str, list[Any]] = {}
        elif isinstance(data, Mapping):
            self.columns = {str(k): list(v) for k, v in data.items()}
        else:
            rows = list(data)
            names = list(dict.fromkeys(k for row in rows for k in row))
            self.columns = {k: [row.get(k) for row in rows] for k in names}

    def to_dict(self, as_series: bool = True) -> dict[str, list[Any]]:
        return {k: list(v) for k, v in self.columns.items()}

    def write_csv(self, file: Any = None) -> str | None:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(self.columns)
        writer.writerows(zip(*self.columns.values()))
        if file is None:
            return out.getvalue()
        with open(file, "w") as handle:
            handle.write(out.getvalue())
        return None


def read_csv(source: Any, **_options: Any) -> DataFrame:
    """A CSV file (path or bytes) as a :class:`DataFrame`, numbers read as numbers."""
    text = bytes(source).decode() if isinstance(source, (bytes, bytearray)) else open(source).read()
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        return DataFrame()
    names = [name.strip() for name in rows[0]]
    return DataFrame({name: [_value(row[i].strip()) for row in rows[1:]] for i, name in enumerate(names)})

"""The proxy ranking (:class:`Ranking`): systems from best to worst, with the macro WER behind
the order, saved as a small JSON artefact that estimation on unlabelled data reuses. A light
module of its own, so that a model's card and a run's declarations name it without the proxy
choice (:mod:`werest.features.proxy` ranks and chooses with it)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from werest.errors import InputError
from werest.io import atomic_path

#: the proxy choice's log, where a ranking's warnings have always been written
log = logging.getLogger("werest.features.proxy")

RANKING_VERSION = 1


@dataclass(frozen=True)
class Ranking:
    """Systems from best to worst, with the macro WER behind the order."""

    systems: list[str]
    macro_wer: dict[str, float]
    datasets: dict[str, list[str]] = field(default_factory=dict)
    normaliser: str = "whisper_english"  # the name of the Normaliser its WERs were scored under

    def order(
        self, systems: list[str] | set[str], unseen_order: list[str] | None = None
    ) -> list[str]:
        """``systems`` best first: ranked ones by rank, then unseen ones in ``unseen_order``
        (e.g. :func:`consensus_order`), else by name."""
        position = {name: i for i, name in enumerate(self.systems)}
        unseen = sorted(set(systems) - set(position))
        if unseen_order:
            place = {name: i for i, name in enumerate(unseen_order)}
            unseen.sort(key=lambda name: (place.get(name, len(place)), name))
        if unseen:
            log.warning("systems not in the ranking, ranked last: %s", unseen)
        return sorted(set(systems) & set(position), key=position.__getitem__) + unseen

    def describe(self) -> str:
        """The ranking as readable lines."""
        lines = ["rank  system  macro WER %  datasets"]
        for i, name in enumerate(self.systems, start=1):
            datasets = ", ".join(self.datasets.get(name, []))
            lines.append(f"{i:>4}  {name}  {100 * self.macro_wer[name]:.2f}  {datasets}")
        return "\n".join(lines)

    def save(self, path: str | Path) -> Path:
        """Write the ranking as JSON (atomically)."""
        path = Path(path)
        with atomic_path(path) as tmp:
            tmp.write_text(
                json.dumps({"version": RANKING_VERSION, **asdict(self)}, indent=2), encoding="utf-8"
            )
        return path

    @classmethod
    def from_order(cls, systems: Iterable[str]) -> Ranking:
        """A ranking that is only an order, best first (a user's ``system_order``, an explicit
        proxy, the label-free :func:`consensus_order`): no WER was measured behind it."""
        names = [str(name) for name in systems]
        return cls(systems=names, macro_wer=dict.fromkeys(names, float("nan")))

    @classmethod
    def load(cls, path: str | Path) -> Ranking:
        """Read a ranking written by :meth:`save`."""
        path = Path(path)
        if not path.is_file():
            raise InputError("no such ranking file", path=path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise TypeError(f"expected a JSON object, got {type(data).__name__}")
            data.pop("version", None)
            ranking = cls(**data)
            if not isinstance(ranking.systems, list) or not isinstance(ranking.macro_wer, dict):
                raise TypeError("'systems' must be a list and 'macro_wer' an object")
        except (json.JSONDecodeError, UnicodeDecodeError, TypeError, ValueError) as error:
            message = " ".join(str(error).split())
            raise InputError(f"not a werest ranking: {message}", path=path) from None
        if set(ranking.systems) != set(ranking.macro_wer):
            raise InputError("not a werest ranking: systems and macro_wer differ", path=path)
        return ranking

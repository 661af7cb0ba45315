"""The leaderboard's fairness audits (:mod:`werest.evaluation.fairness`): every (dataset,
system) with demographic values audited from estimated and from true WER on the same
utterances, the categories skipped for want of a large enough group, and FAAS per system.
"""

from __future__ import annotations

import pandas as pd

from werest.errors import ConfigError
from werest.estimation.corpus import estimated_sample
from werest.evaluation.fairness import (
    FairnessSettings,
    audit,
    audit_frames,
    compare_audits,
    skipped_message,
)
from werest.ranking.rows import ROW_ORDER


def add_faas(board: pd.DataFrame, fairness: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """FAAS per system, label-free and true: the mean over the system's audited datasets."""
    if "summary" not in fairness:
        return board
    summary = fairness["summary"]
    columns = [c for c in ("est_faas", "true_faas") if c in summary]
    means = summary.groupby("system")[columns].mean()  # ±inf kept, as in the audit
    return board.merge(means.reset_index(), on="system", how="left")


def audit_rows(
    done: pd.DataFrame, scored: pd.DataFrame | None
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """(estimated, true) audit rows: the same utterances (estimated, and labelled if any),
    each carrying its demographic columns (:func:`werest.ranking.leaderboard.utterance_rows`)."""
    terms = estimated_sample(done)
    est = done.assign(words=terms.denominator, errors=terms.numerator)
    if scored is None:
        return est, None
    true = scored.assign(errors=scored["word_errors"], words=scored["ref_words"])
    common = est[ROW_ORDER].merge(true[ROW_ORDER], on=ROW_ORDER)
    return est.merge(common, on=ROW_ORDER), true.merge(common, on=ROW_ORDER)


def fairness_audits(
    done: pd.DataFrame,
    scored: pd.DataFrame | None,
    settings: FairnessSettings,
    warnings: list[dict] | None = None,
) -> dict[str, pd.DataFrame]:
    """Audit every (dataset, system) with demographic values, from true and estimated WER
    (``done``/``scored``: the estimated and labelled rows of
    :func:`werest.ranking.leaderboard.utterance_rows`, which carry the demographic columns).

    A category none of whose groups reaches ``min_group_size`` in a dataset is skipped there,
    with a warning per dataset and category added to ``warnings``; a (dataset, system) with
    no category left has no audit."""
    categories = [c for c in settings.categories if c in done.columns]
    if not categories:
        return {}
    speakers = settings.speaker in done.columns and done[settings.speaker].notna().any()
    if settings.model == "glmm" and not speakers:
        raise ConfigError(
            f"fairness.model=glmm needs a speaker column ({settings.speaker!r}) for its "
            "per-speaker random intercept, and the input has none: add it, or use "
            "fairness.model=glm"
        )
    est, true = audit_rows(done, scored)
    tables, skipped = AuditTables(), SkippedCategories()
    for (dataset, system), rows in est.groupby(["dataset", "system"], sort=True):
        if not rows[categories].notna().any().any():
            continue
        results = {"est": audit(rows, settings)}
        if true is not None:
            mine = true[(true["dataset"] == dataset) & (true["system"] == system)]
            results["true"] = audit(mine, settings)
        skipped.add(dataset, system, results.values())
        if results["est"].categories:  # else every category skipped: nothing to report
            tables.add(dataset, system, results, settings.alpha)
    if warnings is not None:
        warnings += skipped.warnings(settings)
    return tables.frames()


class AuditTables:
    """The tables of :func:`fairness_audits`, filled a (dataset, system) at a time: its
    summary row, its groups and categories, and the comparison of the true audit with the
    estimated one."""

    def __init__(self) -> None:
        self.summary: list[dict] = []
        self.groups: list[pd.DataFrame] = []
        self.categories: list[pd.DataFrame] = []
        self.comparison: list[pd.DataFrame] = []

    def add(self, dataset: str, system: str, results: dict, alpha: float) -> None:
        """The audits of one (dataset, system): ``results`` by label (``est``, ``true``)."""
        record = {"dataset": dataset, "system": system}
        for label, result in results.items():
            g, c = audit_frames(result, label)
            self.groups.append(g.assign(dataset=dataset, system=system))
            self.categories.append(c.assign(dataset=dataset, system=system))
            record |= {
                f"{label}_n": result.n_utterances,
                f"{label}_wer": result.wer,
                f"{label}_overall": result.overall_score,
                f"{label}_faas": result.faas,
            }
        if "true" in results:
            self.comparison.append(
                compare_audits(results["true"], results["est"], alpha).assign(
                    dataset=dataset, system=system
                )
            )
        self.summary.append(record)

    def frames(self) -> dict[str, pd.DataFrame]:
        """``summary``, ``groups``, ``categories`` and ``comparison`` (with a true audit);
        none when nothing was audited."""
        if not self.summary:
            return {}
        frames = {
            "summary": pd.DataFrame(self.summary),
            "groups": pd.concat(self.groups, ignore_index=True),
            "categories": pd.concat(self.categories, ignore_index=True),
        }
        if self.comparison:
            frames["comparison"] = pd.concat(self.comparison, ignore_index=True)
        return frames


class SkippedCategories:
    """The categories :func:`werest.evaluation.fairness.audit` skipped (no group reaching
    ``min_group_size``), per dataset, and the systems audited there."""

    def __init__(self) -> None:
        self.systems: dict[str, list[str]] = {}  # dataset -> the systems audited
        # (dataset, category) -> {system: its largest group}
        self.largest: dict[tuple[str, str], dict[str, int]] = {}

    def add(self, dataset: str, system: str, audits) -> None:
        self.systems.setdefault(dataset, []).append(system)
        for result in audits:
            for category, largest in result.skipped.items():
                mine = self.largest.setdefault((dataset, category), {})
                mine[system] = max(largest, mine.get(system, 0))

    def warnings(self, settings: FairnessSettings) -> list[dict]:
        """One warning per dataset and category, naming the systems unless all of them."""
        found = []
        for (dataset, category), by_system in self.largest.items():
            systems = sorted(by_system)
            message = skipped_message(category, max(by_system.values()), settings)
            if set(systems) != set(self.systems[dataset]):
                message = f"{', '.join(systems)}: {message}"
            found.append({"dataset": dataset, "systems": systems, "message": message})
        return found

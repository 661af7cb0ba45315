"""The evaluation stage's sections, declared once (:mod:`werest.settings`) in a module that
imports nothing heavy, so ``werest <command> --help`` reads their defaults, rules and help; and
the experiments' defaults a config option names (``${library:...}``). The one that holds the
model's conformal interval, ``lodo:``, is declared beside it in
:mod:`werest.evaluation.lodo_settings`, so that the leaderboard's fairness audits
(:class:`FairnessSettings`) read theirs without the model's sections."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from werest.errors import ConfigError
from werest.settings import Section, as_names, param

if TYPE_CHECKING:
    import pandas as pd

#: the demographic columns audited where present, unless ``fairness.categories`` names others
DEFAULT_CATEGORIES = ("gender", "age", "accent")
#: labelled utterances per dataset the few-label experiment draws (10: where too few starts);
#: the one declaration (conf/experiment/few_labels.yaml reads it: ``${library:...}``)
BUDGETS: tuple[int, ...] = (10, 25, 50, 100, 200)
#: The share of the winner experiment's stress dataset's utterances where its best system loops.
STRESS_SHARE = 0.02
#: The dataset the stress dataset copies: mu-bench's es-MX phone calls (792 utterances, 6
#: systems), of the size and shape of the dataset where random sheets stopped wrong (#47).
STRESS_DATASET = "mubench-es-MX"


@dataclass(frozen=True)
class FairnessSettings(Section):
    """How the audit is run (``werest leaderboard``'s ``fairness:`` block builds it by its
    ``_target_``; :mod:`werest.evaluation.fairness` audits with it).

    Parameters
    ----------
    enabled : whether ``werest leaderboard`` runs the audit at all.
    categories : demographic columns to audit. Of the default ones (gender, age, accent),
        those the input lacks are skipped; a column named otherwise must be in the input
        (:meth:`check_columns`).
    weights : category → weight in the overall score (missing categories weigh 1).
    min_group_size : utterances a group needs to stand on its own.
    small_groups : ``pool`` (into one "other (pooled)" group) or ``drop``.
    alpha : the significance level of the penalty p/α.
    dispersion : ``pearson`` (quasi-likelihood LRT) or ``none`` (plain Poisson LRT).
    covariates : numeric columns entered as log(value) when every audited row has one.
    speaker : the speaker column; when present the test is the cluster-robust Wald test
        (``model: glm``) or the GLMM's likelihood-ratio test (``model: glmm``).
    model : ``glm`` (Poisson GLM; cluster-robust Wald test with speakers) or ``glmm`` (the
        published model: Poisson GLMM with a per-speaker random intercept, maximum likelihood
        by adaptive Gauss–Hermite quadrature, :mod:`werest.evaluation.glmm`, and its LRT; ``werest
        leaderboard`` refuses it on an input without a speaker column, and an audit whose rows
        have no speaker value uses ``glm`` and says so in its note).
    quadrature_nodes : Gauss–Hermite nodes per speaker for ``glmm`` (1 = Laplace).
    """

    SECTION: ClassVar[str] = "fairness"

    enabled: bool = param(True, "false: no audit")
    categories: tuple[str, ...] = param(DEFAULT_CATEGORIES, "columns audited where present")
    weights: Mapping[str, float] = param({}, "category -> weight in the overall score (default 1)")
    min_group_size: int = param(30, "smaller groups are pooled (or dropped)", minimum=1)
    small_groups: str = param("pool", "pool | drop", choices=("pool", "drop"))
    alpha: float = param(
        0.05, "penalty: score * p/alpha when p < alpha", minimum=0, maximum=1, closed="neither"
    )
    dispersion: str = param(
        "pearson",
        "pearson (quasi-likelihood LRT) | none (plain LRT)",
        choices=("pearson", "none"),
    )
    covariates: tuple[str, ...] = param(
        ("duration",), "entered as log(value) where every row has one"
    )
    speaker: str | None = param("speaker", "cluster-robust Wald test when this column exists")
    model: str = param(
        "glm",
        "glm | glmm (Poisson GLMM, per-speaker random intercept, LRT)",
        choices=("glm", "glmm"),
    )
    quadrature_nodes: int = param(
        15, "adaptive Gauss-Hermite nodes per speaker (1 = Laplace)", minimum=1
    )

    def __post_init__(self) -> None:
        # a config gives lists and mappings: held as tuples and a plain dict
        object.__setattr__(self, "categories", tuple(self.categories or ()))
        object.__setattr__(self, "covariates", tuple(self.covariates or ()))
        object.__setattr__(self, "weights", dict(self.weights or {}))
        super().__post_init__()
        bad = {c: w for c, w in self.weights.items() if not float(w) >= 0}
        if bad:
            raise ConfigError(f"fairness.weights must be ≥ 0, got {bad}")

    def check_columns(self, columns: Sequence[str]) -> None:
        """ConfigError, before any work, for a category the user named (``categories`` other
        than the default ones, which are audited where present) that is not a column of the
        input (``columns``): naming it and the columns there are."""
        if self.categories == DEFAULT_CATEGORIES:
            return
        missing = [c for c in self.categories if c not in columns]
        if missing:
            shown = ", ".join(str(c) for c in columns)
            raise ConfigError(
                f"fairness.categories: the input has no column {missing[0]!r} (its columns: "
                f"{shown}); name demographic columns it has, or leave fairness.categories unset"
            )


@dataclass(frozen=True)
class FourCases(Section):
    """Who trains and where: source system S, targets T, benchmark B and wild W datasets
    (``cases:`` of ``werest evaluate experiment=four_cases`` builds it by its ``_target_``;
    :mod:`werest.evaluation.four_cases` evaluates them).

    Parameters
    ----------
    source_system : S, whose rows of B∖{b} train each fold's model.
    target_systems : T, evaluated in cases 2 and 4.
    benchmark_datasets : B, left out one at a time (at least two).
    wild_datasets : W, never used for ranking or training.
    unseen_wild_targets : also evaluate, in case 4, systems of W that no B dataset has.
    rationale : why these choices (Markdown), quoted in the report.

    Raises
    ------
    ConfigError : a combination no table can satisfy (one line naming ``cases``), checked here
        so that it fails before the data are read; :meth:`validate` checks the names.
    """

    SECTION: ClassVar[str] = "cases"

    source_system: str = param()
    target_systems: tuple[str, ...] = param()
    benchmark_datasets: tuple[str, ...] = param()
    wild_datasets: tuple[str, ...] = param(())
    unseen_wild_targets: bool = param(True, "case 4 also evaluates W systems no B dataset has")
    rationale: str | None = param(None)

    def __post_init__(self) -> None:
        # a config gives one name or a list of names; held as tuples of text
        for key in ("target_systems", "benchmark_datasets", "wild_datasets"):
            object.__setattr__(self, key, as_names(getattr(self, key)))
        object.__setattr__(self, "source_system", str(self.source_system))
        super().__post_init__()
        if len(set(self.benchmark_datasets)) < 2:
            raise ConfigError(
                "cases.benchmark_datasets needs two or more datasets to leave one out"
            )
        both = sorted(set(self.benchmark_datasets) & set(self.wild_datasets))
        if both:
            raise ConfigError(
                f"cases: dataset {both[0]!r} is in benchmark_datasets and wild_datasets"
            )
        if self.source_system in self.target_systems:
            raise ConfigError(
                f"cases: source system {self.source_system!r} is also in target_systems"
            )

    def validate(self, table: pd.DataFrame) -> None:
        """ConfigError (one line) for names the table lacks."""
        datasets = set(table["dataset"].unique())
        systems = set(table["system"].unique())
        for key, names in (
            ("benchmark_datasets", self.benchmark_datasets),
            ("wild_datasets", self.wild_datasets),
        ):
            unknown = [name for name in names if name not in datasets]
            if unknown:
                raise ConfigError(
                    f"cases.{key}: unknown dataset {unknown[0]!r} "
                    f"(datasets: {', '.join(sorted(datasets))})"
                )
        for name in (self.source_system, *self.target_systems):
            if name not in systems:
                raise ConfigError(
                    f"cases: unknown system {name!r} (systems: {', '.join(sorted(systems))})"
                )
        benchmark = table[table["dataset"].isin(self.benchmark_datasets)]
        if self.source_system not in set(benchmark["system"]):
            raise ConfigError(
                f"cases: source system {self.source_system!r} is in no benchmark dataset"
            )

    def case_of(self, systems_by_dataset: Mapping[str, set[str]], held_out: str) -> pd.DataFrame:
        """``dataset, system, case`` of every evaluated pair in the fold holding out ``held_out``.

        ``systems_by_dataset`` maps each dataset of B ∪ W to its systems.
        """
        import pandas as pd

        benchmark_systems = set().union(
            *(systems_by_dataset[d] for d in self.benchmark_datasets if d in systems_by_dataset)
        )
        rows = [
            (held_out, system, 1 if system == self.source_system else 2)
            for system in sorted(systems_by_dataset.get(held_out, set()))
            if system == self.source_system or system in self.target_systems
        ]
        for dataset in self.wild_datasets:
            present = systems_by_dataset.get(dataset, set())
            has_source = self.source_system in present
            for system in sorted(present):
                if system == self.source_system:
                    rows.append((dataset, system, 3))
                elif (
                    not has_source
                    or system in self.target_systems
                    or (self.unseen_wild_targets and system not in benchmark_systems)
                ):
                    rows.append((dataset, system, 4))
        return pd.DataFrame(rows, columns=["dataset", "system", "case"])

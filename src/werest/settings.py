"""Settings declared once, on the library's classes, and checked by one validator.

A section (a frozen dataclass a stage takes: :class:`Bootstrap`,
:class:`werest.estimation.settings.WinnerSettings`, ...) declares each field with
:func:`param`: its default, its help text and what it allows (:class:`Rule`: a number's bounds,
as scikit-learn's ``Interval``, and a text's choices, as its ``StrOptions``). The section's
``__post_init__`` calls :func:`check`, which refuses a value the rule does not allow with a
one-line :class:`~werest.errors.ConfigError` naming ``section.field``, as scikit-learn's
``validate_params`` reads ``_parameter_constraints``. Relations between fields (``segment_seconds
<= max_seconds``) stay the section's own checks.

The command line reads the same declarations (:mod:`werest.cli.declare`): a command's setting
that a section takes has the section's default, rule and help, so ``werest <command> --help``,
the config and the CLI's checks cannot drift from the library. This module imports nothing
heavy, and neither do the stages' ``settings`` modules that hold their sections, so ``--help``
reads them without numpy or pandas.

:class:`Bootstrap` is the base stage's own section (:mod:`werest.stats` computes with it).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from werest.errors import ConfigError

#: which ends of a number's bounds are allowed (scikit-learn's ``Interval(closed=...)``)
Closed = Literal["both", "left", "right", "neither"]
#: the most resamples a bootstrap may draw: beyond it the run takes hours (the leaderboard's
#: pairs) or its resample matrices exceed any machine's memory (few_labels' interval)
MAX_RESAMPLES = 1_000_000
#: n_jobs' upper bound, per core this process may run on: beyond a few workers per core, more
#: only add memory (each holds its chunk of the table) and switching (``n_jobs=40`` on 2
#: cores started 42 processes). Negative counts (-1: every core) never exceed the cores.
N_JOBS_PER_CORE = 4
N_JOBS_HELP = f"worker processes (-1: every core; at most {N_JOBS_PER_CORE} per core)"


@dataclass(frozen=True)
class Rule:
    """What a setting allows: a number's bounds and a text's choices.

    Parameters
    ----------
    minimum, maximum : the bounds (None: unbounded on that side).
    closed : which of them are allowed themselves, as in scikit-learn's ``Interval``: ``both``
        (``[min, max]``), ``left`` (``[min, max)``), ``right`` (``(min, max]``) or ``neither``.
    nonzero : refuse 0 (``n_jobs``: -1 means every core, 0 means nothing).
    choices : the allowed texts, if restricted.
    why : where the bounds come from, said when a number is refused (``n_jobs``: the cores).
    """

    minimum: float | None = None
    maximum: float | None = None
    closed: Closed = "both"
    nonzero: bool = False
    choices: tuple[str, ...] | None = None
    why: str = ""

    def allows(self, number: float) -> bool:
        """Whether ``number`` lies within the bounds (and is not a refused 0)."""
        low, high = self.minimum, self.maximum
        left, right = self.closed in ("both", "left"), self.closed in ("both", "right")
        low_ok = low is None or (number >= low if left else number > low)
        high_ok = high is None or (number <= high if right else number < high)
        return low_ok and high_ok and not (self.nonzero and number == 0)

    def bounds(self) -> str:
        """The bounds in words: ``>= 1``, ``in (0, 1)``, ``in [0, 1000000]``; '' if none."""
        low, high = self.minimum, self.maximum
        if low is not None and high is not None:
            left = "[" if self.closed in ("both", "left") else "("
            right = "]" if self.closed in ("both", "right") else ")"
            return f"in {left}{_number(low)}, {_number(high)}{right}"
        if low is not None:
            return f"{'>=' if self.closed in ('both', 'left') else '>'} {_number(low)}"
        if high is not None:
            return f"{'<=' if self.closed in ('both', 'right') else '<'} {_number(high)}"
        return ""

    def words(self) -> str:
        """What the rule allows, in words: ``in [0, 1)``, ``>= 1 other than 0``, ``one of a,
        b``; '' if it allows anything."""
        if self.choices is not None:
            return f"one of {', '.join(self.choices)}"
        return " ".join(p for p in (self.bounds(), "other than 0" * self.nonzero) if p)

    def refusal(self, value: Any) -> str | None:
        """Why ``value`` is refused (``must be in (0, 1), got 1.0``), or None if allowed. Text is
        compared with the choices as given, numbers with the bounds; None and other types pass
        (the annotation says what a field holds, a caller's type checker sees it)."""
        if self.choices is not None:
            return None if not isinstance(value, str) or value in self.choices else self._no(value)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return None if self.allows(value) else self._no(value)

    def _no(self, value: Any) -> str:
        why = f" ({self.why})" if self.why and value != 0 else ""  # 0: nothing to do at all
        return f"must be {self.words()}, got {value!r}{why}"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def param(
    default: Any = dataclasses.MISSING,
    help: str = "",
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    closed: Closed = "both",
    nonzero: bool = False,
    choices: tuple[str, ...] | None = None,
    why: str = "",
    as_text: bool = False,
) -> Any:
    """A section's field: its ``default`` (none: required), its ``help`` text (what ``werest
    <command> --help`` says of the setting) and its :class:`Rule`. A list or a mapping default
    is copied for each instance. ``as_text``: a :class:`~pathlib.Path` given for it is held as
    its text, as a config gives it (a setting that names a file or a keyword: ``ranking``)."""
    rule = Rule(minimum, maximum, closed, nonzero, tuple(choices) if choices else None, why)
    metadata = {"help": help, "rule": rule}
    if as_text:
        metadata["as_text"] = True
    if isinstance(default, list | dict):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def same_as(section: type, name: str) -> Any:
    """A field declared as ``section``'s field ``name`` is (its default, help and rule), for a
    section that holds the same setting (``lodo.level`` is the interval's ``level``)."""
    (item,) = [f for f in dataclasses.fields(section) if f.name == name]
    rule = rule_of(item)
    return param(
        default_of(item),
        item.metadata.get("help", ""),
        **{k: getattr(rule, k) for k in ("minimum", "maximum", "closed", "nonzero", "choices")},
        why=rule.why,
    )


def rule_of(item: dataclasses.Field) -> Rule:
    """The :class:`Rule` a field declares (none: one that allows anything)."""
    return item.metadata.get("rule") or Rule()


def default_of(item: dataclasses.Field) -> Any:
    """A field's default (a factory's value), or :data:`dataclasses.MISSING` (required)."""
    if item.default_factory is not dataclasses.MISSING:
        return item.default_factory()
    return item.default


def as_names(value: Any) -> tuple[str, ...]:
    """One name or a list of names (as a config gives them) as a tuple of text, for a
    section's ``__post_init__``."""
    return tuple(str(v) for v in ((value,) if isinstance(value, str) else (value or ())))


def check(section: Any, name: str = "") -> None:
    """ConfigError naming ``name.field`` (``field`` for a nameless section) for the first field
    of the dataclass ``section`` whose value its rule refuses."""
    for item in dataclasses.fields(section):
        refused = rule_of(item).refusal(getattr(section, item.name))
        if refused:
            raise ConfigError(f"{name}.{item.name} {refused}" if name else f"{item.name} {refused}")


class Section:
    """A section checks its fields against their rules on creation (:func:`check`) and holds
    a path given for an ``as_text`` field as its text (:func:`param`). Its ``SECTION`` is the
    name a config gives it (``winner``), which its errors name; a dataclass that also checks
    relations between fields overrides ``__post_init__`` and calls ``super().__post_init__()``
    first."""

    SECTION: ClassVar[str] = ""

    def __post_init__(self) -> None:
        check(self, self.SECTION)
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if item.metadata.get("as_text") and isinstance(value, Path):
                object.__setattr__(self, item.name, str(value))


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity, e.g. a container's or taskset's
    share), else the machine's."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def n_jobs_param(default: int = 1) -> Any:
    """``n_jobs``, declared once: joblib's count (-1: every core; 0 is refused), at most
    :data:`N_JOBS_PER_CORE` per available core (a bound of this machine: a higher value is
    refused in one line, before any work, never clipped)."""
    cores = available_cores()
    return param(
        default,
        N_JOBS_HELP,
        nonzero=True,
        maximum=max(N_JOBS_PER_CORE * cores, default),
        why=f"at most {N_JOBS_PER_CORE} per core, and this machine gives werest {cores}",
    )


@dataclass(frozen=True)
class Bootstrap(Section):
    """Bootstrap settings shared by every CI and test of a run (the ``bootstrap:`` block of
    ``werest score`` and ``werest leaderboard`` builds it by its ``_target_``).

    Parameters
    ----------
    n_resamples : resamples per interval or test (0: none).
    confidence : the intervals' level, between 0 and 1.
    seed : the resampling seed.
    """

    SECTION: ClassVar[str] = "bootstrap"

    n_resamples: int = param(1000, "resamples per interval", minimum=0, maximum=MAX_RESAMPLES)
    confidence: float = param(0.95, "the intervals' level", minimum=0, maximum=1, closed="neither")
    seed: int = param(0, "the same seed gives the same intervals", minimum=0)

"""``werest train``: labelled transcripts -> features + labels -> a fitted, carded model.

The flow, each step a function the four-case evaluation reuses:

1. :func:`load_sources` reads the configured sources (importer layouts or transcripts tables);
2. :func:`rank_on` ranks the systems on the labelled training data;
3. :func:`training_frame` chooses proxies, computes the agreement features and joins the labels
   (utterance WER and CER), keeping rows that have both;
4. :func:`fit_model` fits the configured estimator (``conf/model/``) with grouped folds;
5. :func:`werest.model.files.save_model` writes ``<output_dir>/<name>.skops`` and its card.
"""

from __future__ import annotations

import fnmatch
import logging
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np
import pandas as pd

from werest.columns import KEY, UTTERANCE
from werest.errors import ConfigError, InputError
from werest.features.agreement import (
    STATUS_OK,
    two_system_view,
)
from werest.features.inputs import (
    build_features,
    input_columns,
    require_inputs,
    with_feature_table,
)
from werest.features.proxy import Ranking, choose_proxies, rank_on
from werest.ingest.importers import OPTIONS, import_table
from werest.ingest.table import read_table
from werest.model.files import TrainedModel, fingerprint
from werest.model.intervals import DEFAULT_INTERVAL, ConformalInterval, calibration_from_cells
from werest.model.settings import (
    LABEL_FREE_PROXIES,
    PROXY_CHOICES,
    RANKED_PROXIES,
    TrainingOptions,
)
from werest.text.normalise import AUTO, Normaliser
from werest.text.scoring import utterance_labels

log = logging.getLogger(__name__)

#: keys of a ``data.sources`` entry besides the importer options
#: (:data:`werest.ingest.importers.OPTIONS`)
SOURCE_KEYS: tuple[str, ...] = ("format", "paths", "table", "datasets")


def labelled_table(
    data: Mapping, feature_names: Sequence[str] = (), features_table: str | Path | None = None
) -> pd.DataFrame:
    """The labelled transcripts of a data config (``conf/data/``: :func:`load_sources`), for
    ``werest train``/``evaluate``, with the input features of ``feature_names`` joined by key
    from ``features_table`` when one is given (a feature table of ``werest features`` +
    ``werest embed``: similarity, likelihoods)."""
    table = load_sources(data)
    if not features_table:
        return table
    numeric = tuple(input_columns(feature_names))
    features = read_table(features_table, required=tuple(KEY), numeric=numeric)
    return with_feature_table(table, features, list(feature_names), source=features_table)


def load_sources(data: Mapping) -> pd.DataFrame:
    """The transcripts of a ``conf/data`` config: importer sources and/or table files (each
    optionally restricted to its own ``datasets``), restricted to ``datasets`` and without
    ``exclude_datasets``, with datasets renamed by ``rename`` (``{old: new}``: two sources of
    one corpus become one dataset, e.g. dighr's and AfriSpeech's LibriSpeech test-clean runs;
    their systems must differ).

    An importer source may carry importer options as ``werest import`` takes them
    (``reference``, ``streaming``...: :data:`werest.ingest.importers.OPTIONS`). Where several
    sources
    give one dataset, each utterance gets one reference (:func:`join_references`)."""
    frames = []
    for number, source in enumerate(data["sources"]):
        if source.get("table"):
            frame = read_table(source["table"])
        else:
            options = importer_options(source, number)
            frame = import_table(source["format"], list(source["paths"]), **options)
        if source.get("datasets"):  # this source's datasets only (another gives the rest)
            frame = frame[frame["dataset"].isin(list(source["datasets"]))]
        frames.append(frame.assign(_source=number))
    if not frames:
        raise ConfigError("data.sources is empty: nothing to train on")
    table = pd.concat(frames, ignore_index=True, sort=False)
    if data.get("rename"):
        table["dataset"] = table["dataset"].replace(dict(data["rename"]))
        duplicated = table.duplicated(KEY)
        if duplicated.any():
            key = tuple(table.loc[duplicated, KEY].iloc[0])
            raise ConfigError(f"data.rename joins two rows with one key {key}: rename a system")
    if data.get("datasets"):
        table = table[table["dataset"].isin(list(data["datasets"]))]
    if data.get("exclude_datasets"):
        table = table[~table["dataset"].isin(list(data["exclude_datasets"]))]
    if table.empty:
        raise ConfigError("no rows left after the data config's dataset filters")
    table = join_references(table, "_source")
    return table.drop(columns="_source").reset_index(drop=True)


def importer_options(source: Mapping, number: int = 0) -> dict:
    """The importer options of a ``data.sources`` entry; ConfigError on any other key."""
    unknown = [k for k in source if k not in SOURCE_KEYS and k not in OPTIONS]
    if unknown:
        raise ConfigError(
            f"data.sources[{number}]: unknown key(s) {', '.join(map(str, unknown))}; a source "
            f"takes {', '.join(SOURCE_KEYS)} and the importer options {', '.join(OPTIONS)}"
        )
    return {k: source[k] for k in source if k in OPTIONS}


def join_references(table: pd.DataFrame, source: str) -> pd.DataFrame:
    """One reference per utterance of a dataset that several sources give (column ``source``
    tells them apart): a row without a reference takes the first source's that has one
    (a label-free import joined to labelled ones); references that differ are replaced by
    the first source's (config order), with a warning. Datasets of one source keep their
    importer's references as they are."""
    if "reference" not in table.columns:
        return table
    shared = table.groupby("dataset")[source].transform("nunique") > 1
    if not shared.any():
        return table
    rows = table.loc[shared].sort_values(source, kind="stable")
    first = rows.groupby(UTTERANCE, sort=False)["reference"].transform("first")
    reference = rows["reference"]
    filled = reference.isna() & first.notna()
    differ = reference.notna() & (reference.fillna("") != first.fillna(""))
    if filled.any():
        log.info("%d row(s) without a reference took another source's", int(filled.sum()))
    if differ.any():
        row = rows.loc[differ].iloc[0]
        log.warning(
            "%d row(s) whose reference differs from the first source's for the same utterance "
            "(e.g. %s/%s, system %s); the first source's used",
            int(differ.sum()),
            row["dataset"],
            row["utt_id"],
            row["system"],
        )
    if filled.any() or differ.any():
        table = table.copy()
        table.loc[first.index, "reference"] = first
    return table


def training_frame(
    table: pd.DataFrame,
    ranking: Ranking,
    *,
    normaliser: Normaliser,
    targets: list[str] | None = None,
    labels: pd.DataFrame | None = None,
    two_system_views: bool = False,
    n_jobs: int = 1,
    pairs: pd.DataFrame | None = None,
    input_features: Sequence[str] = (),
    proxy_choice: str = RANKED_PROXIES,
    domains: Mapping | None = None,
) -> pd.DataFrame:
    """Agreement features of ``targets``' rows, plus ``input_features`` (features that come
    with the table, e.g. ``similarity`` or ``wl_*``, and their ``*_vs_proxy`` differences:
    :mod:`werest.features.inputs`), joined with their labels.

    ``proxy_choice`` is how each row's proxy is chosen: ``ranking`` (the best system of
    ``ranking``, measured on labels) or ``label_free`` (:func:`label_free_proxies`: as
    ``werest estimate`` chooses them for a user, per domain of ``domains``). A model that
    corrects agreement must learn the bias of the agreement a user gets: ``label_free``.

    ``pairs`` (:func:`werest.features.agreement.pairwise_agreement` of a table holding
    ``table``) saves aligning the hypotheses again.

    Rows without a proxy hypothesis or without a label (no reference, or an empty one) are
    dropped, with a log line. With ``two_system_views``, every row that has more than one other
    system is added a second time as its two-system view
    (:func:`werest.features.agreement.two_system_view`, column ``view`` = ``pair``; the
    others are ``all``).
    """
    from_input = require_inputs(input_features, table, "werest train")
    proxies = training_proxies(
        table,
        ranking,
        proxy_choice,
        targets=targets,
        domains=domains,
        normaliser=normaliser,
        pairs=pairs,
    )
    features = build_features(
        table,
        proxies,
        normaliser=normaliser,
        input_features=from_input,
        pairs=pairs,
        n_jobs=n_jobs,
    )
    if labels is None:
        labels = utterance_labels(table, normaliser, n_jobs)
    frame = usable_rows(features, labels).assign(view="all")
    if two_system_views:
        several = frame[frame["n_others"] > 1]
        frame = pd.concat([frame, two_system_view(several).assign(view="pair")])
    return frame.reset_index(drop=True)


def usable_rows(features: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``features`` with a proxy and a label, joined with their labels (how many
    were left out is said at INFO)."""
    frame = features.merge(labels, on=KEY, how="inner")
    usable = (frame["status"] == STATUS_OK) & frame["wer"].notna()
    dropped = len(features) - int(usable.sum())
    if dropped:
        log.info("%d target row(s) without a proxy or a label left out", dropped)
    return frame[usable]


def training_proxies(
    table: pd.DataFrame,
    ranking: Ranking,
    proxy_choice: str,
    *,
    targets: list[str] | None,
    domains: Mapping | None,
    normaliser: Normaliser,
    pairs: pd.DataFrame | None,
) -> pd.DataFrame:
    """The proxy of each row of ``targets`` (None: every system) as ``proxy_choice`` says
    (:func:`training_frame`): the best other system of ``ranking``, or label-free."""
    if proxy_choice not in PROXY_CHOICES:
        raise ConfigError(
            f"proxies must be one of {', '.join(PROXY_CHOICES)}, got {proxy_choice!r}"
        )
    if proxy_choice == LABEL_FREE_PROXIES:
        proxies = label_free_proxies(table, domains, normaliser=normaliser, pairs=pairs)
        if targets is not None:
            proxies = proxies[proxies["system"].isin(targets)]
        return proxies
    return choose_proxies(table, ranking, targets=targets)


def label_free_proxies(
    table: pd.DataFrame,
    domains: Mapping | None,
    *,
    normaliser: Normaliser,
    pairs: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Each row's proxy as ``werest estimate`` would choose it for a user holding the rows of
    its domain (``domains``, :func:`domain_of`): the best other system of the domain's
    label-free order (:func:`werest.features.proxy.consensus_order`), no label and no name used."""
    from werest.features.proxy import consensus_order

    domain = domain_of(table["dataset"], domains)
    parts = []
    for name in sorted(domain.unique()):
        rows = table[(domain == name).to_numpy()]
        datasets = set(rows["dataset"])
        own = None if pairs is None else pairs[pairs["dataset"].isin(datasets)]
        order = consensus_order(rows, normaliser=normaliser, pairs=own)
        parts.append(choose_proxies(rows, Ranking.from_order(order)))
    return pd.concat(parts, ignore_index=True)


def domain_of(datasets: pd.Series, domains: Mapping | None) -> pd.Series:
    """The domain of each dataset: the first ``{domain: [patterns]}`` entry whose shell pattern
    (``fnmatch``) matches the dataset name; a dataset no pattern matches is its own domain."""
    names = pd.Series(datasets.unique())
    mapping = {}
    for name in names:
        mapping[name] = next(
            (
                str(domain)
                for domain, patterns in (domains or {}).items()
                if any(fnmatch.fnmatchcase(name, str(p)) for p in patterns)
            ),
            name,
        )
    return datasets.map(mapping)


def system_family(system: str) -> str:
    """A system's family, for balancing: the organisation and the model's first name part
    (``openai/whisper-large`` -> ``openai/whisper``, ``deepgram-nova3`` -> ``deepgram``)."""
    organisation, _, model = str(system).lower().rpartition("/")
    head = re.split(r"[-_. ]", model)[0] or model
    return f"{organisation}/{head}" if organisation else head


def balanced_sample(
    frame: pd.DataFrame, max_rows_per_domain: int | None, seed: int = 0
) -> pd.DataFrame:
    """At most ``max_rows_per_domain`` rows per ``domain``, shared equally among its system
    families (a family with fewer rows gives its share to the others), uniformly within a
    family. No domain (AfriSpeech's 25 systems) and no family (seven Whisper variants) can
    then dominate training; small domains keep every row."""
    if not max_rows_per_domain:
        return frame
    rng = np.random.default_rng(seed)
    family = frame["system"].map(system_family)
    keep = []
    for _, rows in frame.groupby("domain", sort=True):
        sizes = family.loc[rows.index].value_counts().sort_values()
        budget, left = int(max_rows_per_domain), len(sizes)
        for name, size in sizes.items():
            take = min(int(size), budget // left)
            members = rows.index[family.loc[rows.index] == name].to_numpy()
            keep.append(rng.choice(members, size=take, replace=False))
            budget, left = budget - take, left - 1
    return frame.loc[np.sort(np.concatenate(keep))]


def prepare_training_rows(frame: pd.DataFrame, data: Mapping, seed: int = 0) -> pd.DataFrame:
    """``domain`` from ``data.domains`` and the balanced sample of ``data.max_rows_per_domain``."""
    frame = frame.assign(domain=domain_of(frame["dataset"], data.get("domains")).to_numpy())
    return balanced_sample(frame, data.get("max_rows_per_domain"), seed).reset_index(drop=True)


def cv_groups(frame: pd.DataFrame) -> np.ndarray:
    """Fold groups: the domain (else the dataset) where there are several, else the utterance,
    so that validation folds are unseen domains, as in use."""
    for column in ("domain", "dataset"):
        if column in frame.columns and frame[column].nunique() > 1:
            return frame[column].to_numpy()
    return (frame["dataset"] + "\0" + frame["utt_id"]).to_numpy()


def fit_model(
    frame: pd.DataFrame,
    feature_names: list[str],
    estimator,
    *,
    target: str = "wer",
    normaliser: Normaliser = AUTO,
    ranking: Ranking | None = None,
) -> TrainedModel:
    """Fit ``estimator`` on ``frame``'s features and ``target`` with grouped folds."""
    missing = [name for name in feature_names if name not in frame.columns]
    if missing:
        raise ConfigError(
            f"features {missing} are not in the training rows: build them with "
            "training_frame(..., input_features=...) or choose another features= set"
        )
    if target not in ("wer", "cer"):
        raise ConfigError(f"target must be wer or cer, got {target!r}")
    _check_anchor(estimator, feature_names, target)
    X = frame[feature_names]
    y = frame[target].to_numpy(dtype=float)
    start = time.perf_counter()
    fit_params = {"groups": cv_groups(frame)} if _takes_groups(estimator) else {}
    _fit(estimator, X, y, fit_params)
    seconds = time.perf_counter() - start
    info = {
        "training": {
            "datasets": sorted(frame["dataset"].unique()),
            "systems": sorted(frame["system"].unique()),
            "proxies": sorted(frame["proxy"].unique()),
            "rows": len(frame),
            "utterances": int(frame[["dataset", "utt_id"]].drop_duplicates().shape[0]),
            "domains": sorted(frame["domain"].unique()) if "domain" in frame else [],
            "fit_seconds": round(seconds, 1),
            "data_fingerprint": fingerprint(frame[[*KEY, "proxy", *feature_names, target]]),
        },
        "cv": getattr(estimator, "cv_results_", {})
        if hasattr(estimator, "final_estimator_")
        else {},
    }
    return TrainedModel(estimator, list(feature_names), target, normaliser.name, ranking, info)


def _check_anchor(estimator, feature_names: Sequence[str], target: str) -> None:
    """An anchored model (:class:`werest.model.regressor.AnchoredWerRegressor`) needs its anchor and
    weight among the features, and a CER model the character ones."""
    anchor, weight = getattr(estimator, "anchor", None), getattr(estimator, "weight", None)
    if anchor is None:
        return
    missing = [name for name in (anchor, weight) if name not in feature_names]
    if missing:
        raise ConfigError(
            f"model.anchor/weight {', '.join(missing)} must be among the features "
            f"(features.columns): the anchored model starts from them"
        )
    if target == "cer" and anchor == "pwer":
        raise ConfigError(
            "target=cer with the anchored model needs model.anchor=pcer and "
            "model.weight=proxy_chars (with proxy_chars among the features)"
        )


def read_calibration(path: str | Path, interval: ConformalInterval = DEFAULT_INTERVAL) -> dict:
    """The conformal calibration (:mod:`werest.model.intervals`) at ``interval`` from a LODO cells
    CSV written by ``werest evaluate experiment=lodo`` (``<name>_cells.csv``)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(
            "no such file (a <name>_cells.csv of werest evaluate experiment=lodo)", path=path
        )
    cells = pd.read_csv(path)
    for column in ("domain", "wer", "awer"):
        if column not in cells.columns:
            raise InputError(
                "missing required column (a LODO cells CSV?)", path=path, column=column
            )
    cells = cells.dropna(subset=["wer", "awer"])
    if cells.empty:
        raise InputError("no cell with both wer and awer", path=path)
    calibration = calibration_from_cells(cells, interval)
    return {**calibration, "source": str(path)}


@runtime_checkable
class Regressor(Protocol):
    """What ``conf/model/`` must build: a scikit-learn regressor."""

    def fit(self, X, y, *args, **kwargs): ...

    def predict(self, X): ...


def build_regressor(model: Mapping, **overrides) -> Regressor:
    """The ``model`` config's estimator; a ConfigError naming ``model`` when it cannot be built."""
    from werest.build import instantiate_checked

    return instantiate_checked(model, Regressor, "model", _convert_="all", **overrides)


def _fit(estimator, X: pd.DataFrame, y: np.ndarray, fit_params: dict) -> None:
    """``estimator.fit``; a parameter scikit-learn rejects (a config mistake) is a ConfigError.

    scikit-learn exports no name for that error (``InvalidParameterError`` lives in a private
    module); it is a ValueError and a TypeError at once (both kept for backward
    compatibility), which scikit-learn's errors about the data are not: that tells it apart.
    """
    from werest import logs
    from werest.io import first_line

    try:
        with logs.stage(f"train ({type(estimator).__name__})"):
            estimator.fit(X, y, **fit_params)
    except ValueError as error:
        if not isinstance(error, TypeError):
            raise
        raise ConfigError(f"model: {first_line(error)}") from None


def _takes_groups(estimator) -> bool:
    import inspect

    return "groups" in inspect.signature(estimator.fit).parameters


def train(
    table: pd.DataFrame,
    features: Sequence[str],
    estimator,
    options: TrainingOptions = TrainingOptions(),
    *,
    target: str = "wer",
    train_systems: list[str] | None = None,
    data: Mapping | None = None,
) -> TrainedModel:
    """``werest train``'s job on a labelled table: rank the systems on it, build the training
    rows (:func:`training_frame` as ``options`` say, then the domains and balanced sample of
    ``data``: :func:`prepare_training_rows`) and fit ``estimator`` on ``features``."""
    if "reference" not in table.columns or table["reference"].isna().all():
        raise InputError("the training data has no references: nothing to learn from")
    normaliser = options.normaliser
    labels = utterance_labels(table, normaliser, options.n_jobs)
    ranking = rank_on(table, normaliser, labels=labels)
    frame = training_frame(
        table,
        ranking,
        normaliser=normaliser,
        targets=train_systems,
        labels=labels,
        two_system_views=options.two_system_views,
        n_jobs=options.n_jobs,
        input_features=list(features),
        proxy_choice=options.proxies,
        domains=(data or {}).get("domains"),
    )
    if frame.empty:
        raise InputError("no training rows: no target row has both a proxy and a reference")
    frame = prepare_training_rows(frame, data or {}, seed=options.seed)
    log.info("training on %d rows from %s", len(frame), sorted(frame["dataset"].unique()))
    return fit_model(
        frame, list(features), estimator, target=target, normaliser=normaliser, ranking=ranking
    )

"""``werest convert-model``: an old pickle-based (``.joblib``) model you trust -> a skops one.

werest no longer unpickles models when it loads them (:mod:`werest.model.files`): unpickling runs
whatever code the file names. A ``.joblib`` model written by an earlier werest is refused with
a hint to this command, which unpickles it exactly once, and only when the user says
``trust_model=true`` (a file they made themselves or got from a source they trust). It still
checks the file against its card first (sha256, scikit-learn version), so what is unpickled is
the file the card describes, then writes ``<stem>.skops`` and a new card that keeps the old
card's provenance (training data, cross-validation, config) under the same keys and records
the converted file under ``converted_from``.
"""

from __future__ import annotations

import logging
from pathlib import Path

from werest.errors import ConfigError
from werest.model.files import (
    SUFFIX,
    ModelError,
    check_versions,
    file_kind,
    model_from_payload,
    not_skops_message,
    read_card,
    save_model,
    sha256_of,
)

log = logging.getLogger(__name__)


def convert_model(path: str | Path, out: str | Path | None = None) -> Path:
    """Unpickle the trusted pickle model at ``path`` and write it as skops (``out``, default
    ``path`` with the ``.skops`` suffix) with its card; returns the new path.

    Raises
    ------
    ModelError : no such file, a file that is already skops, one that is no pickle (another
        format's file or corrupt bytes: never unpickled), no card, a sha256 that differs from
        the card's, another scikit-learn version, or a payload that is not a werest model.
    """
    import joblib

    path = Path(path)
    out = Path(out) if out else path.with_suffix(SUFFIX)
    if not path.is_file():
        raise ModelError("no such model file", path=path)
    found = file_kind(path)
    if found.kind == "skops":
        raise ModelError("already a skops model file: nothing to convert", path=path)
    if found.kind != "pickle":  # never unpickle what is not a pickle, trusted or not
        message = not_skops_message(path, found, card=True)
        raise ModelError(f"{message}; convert-model reads only old pickle models", path=path)
    card = read_card(path)
    digest = sha256_of(path)
    if digest != card["sha256"]:
        raise ModelError(
            f"sha256 {digest[:12]}… differs from its card's {card['sha256'][:12]}…: this is "
            "not the file its card describes; refusing to unpickle it",
            path=path,
        )
    if out.resolve() == path.resolve():
        raise ConfigError(f"out={out} would overwrite the model being converted")
    check_versions(card, path)
    try:
        payload = joblib.load(path)
    except Exception as error:  # a pickle can fail in many ways; all mean "unusable file"
        message = " ".join(str(error).split())
        raise ModelError(
            f"cannot unpickle the model: {type(error).__name__}: {message}", path=path
        ) from None
    model = model_from_payload(payload, card, path)
    # save_model measures sha256, size, versions... anew; the rest of the card carries over
    model.info["converted_from"] = {key: card.get(key) for key in ("file", "sha256", "created")}
    return save_model(model, out)

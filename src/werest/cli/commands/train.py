"""``werest train [data=…] [features=text] [model=stack] [name=…]``: the aWER regressor.

Reads the configured sources (:func:`werest.model.training.load_sources`), fits
(:func:`werest.model.training.train`) and writes ``<output_dir>/<name>.skops`` with its JSON card
(the data's licences and use, the calibration, the whole config) and the config.
"""

from __future__ import annotations

import logging
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from werest.cli.commands._common import (
    instantiate_block,
    labelled_table,
    name_list,
    normaliser_setting,
    plain_dict,
    print_blocks,
    save_config,
)
from werest.io import staged_output
from werest.model.files import TrainedModel, save_model
from werest.model.intervals import ConformalInterval
from werest.model.training import build_regressor, read_calibration, train

log = logging.getLogger("werest.model.training")


def run(cfg: DictConfig) -> TrainedModel:
    """Fit on the configured data; write the model, its card and the config."""
    # built before the fit, so that a bad interval fails at once, not after training
    interval = (
        instantiate_block(cfg, "interval", ConformalInterval) if cfg.get("calibration") else None
    )
    data = plain_dict(cfg.data)
    columns = list(cfg.features.columns)
    model = train(
        labelled_table(cfg, columns),
        columns,
        build_regressor(cfg.model),
        target=cfg.target,
        normaliser=normaliser_setting(cfg),
        train_systems=name_list(cfg.get("train_systems")),
        two_system_views=bool(cfg.two_system_views),
        data=data,
        seed=cfg.seed,
        n_jobs=cfg.n_jobs,
        proxy_choice=str(cfg.proxies),
    )
    for key in ("licences", "use"):
        if data.get(key):
            value = data[key]
            model.info[f"data_{key}"] = value if isinstance(value, list | dict) else str(value)
    if interval is not None:
        model.info["calibration"] = read_calibration(cfg.calibration, interval)
    model.info["config"] = OmegaConf.to_container(cfg, resolve=True)
    path = Path(cfg.output_dir) / f"{cfg.name}.skops"
    with staged_output(path, file=True) as staged:  # the model, its card and config as one
        size = save_model(model, staged).stat().st_size
        save_config(cfg, staged.with_suffix(".yaml"))
    log.info("cv: %s", model.info["cv"])
    print_blocks(
        f"model {path.name} ({size / 1e6:.1f} MB); fit "
        f"{model.info['training']['fit_seconds']} s on {model.info['training']['rows']} rows"
    )
    return model

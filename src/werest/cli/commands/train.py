"""``werest train [data=…] [features=text] [model=stack] [name=…]``: the aWER regressor.

Reads the configured sources (:func:`werest.model.training.load_sources`), fits
(:func:`werest.model.training.train`) and writes ``<output_dir>/<name>.skops`` with its JSON card
(the data's licences and use, the calibration, the whole config) and the config.
"""

from __future__ import annotations

import logging

from werest.cli.commands._common import (
    build,
    labelled_table,
    name_list,
    print_blocks,
    save_config,
    training_options,
)
from werest.cli.declare import composed
from werest.cli.schema import TrainSettings
from werest.io import check_output, staged_output
from werest.model.files import TrainedModel, save_model
from werest.model.intervals import ConformalInterval
from werest.model.training import build_regressor, read_calibration, train

log = logging.getLogger("werest.model.training")


def run(settings: TrainSettings) -> TrainedModel:
    """Fit on the configured data; write the model, its card and the config."""
    path = settings.output_dir / f"{settings.name}.skops"
    check_output(path, file=True)  # one that cannot be replaced: refused before the fit
    # built before the fit, so that a bad interval fails at once, not after training
    interval = build(settings.interval, ConformalInterval) if settings.calibration else None
    data = settings.data.as_dict()
    columns = list(settings.features.columns)
    model = train(
        labelled_table(settings, columns),
        columns,
        build_regressor(settings.model.as_dict()),
        training_options(settings),
        target=settings.target,
        train_systems=name_list(settings.train_systems),
        data=data,
    )
    for key in ("licences", "use"):
        if data.get(key):
            value = data[key]
            model.info[f"data_{key}"] = value if isinstance(value, list | dict) else str(value)
    if interval is not None:
        model.info["calibration"] = read_calibration(settings.calibration, interval)
    model.info["config"] = composed(settings)
    with staged_output(path, file=True) as staged:  # the model, its card and config as one
        size = save_model(model, staged).stat().st_size
        save_config(settings, staged.with_suffix(".yaml"))
    log.info("cv: %s", model.info["cv"])
    print_blocks(
        f"model {path.name} ({size / 1e6:.1f} MB); fit "
        f"{model.info['training']['fit_seconds']} s on {model.info['training']['rows']} rows"
    )
    return model

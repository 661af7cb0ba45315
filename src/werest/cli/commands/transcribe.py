"""``werest transcribe input=T|DIR asr=pocketsphinx out=T2``: a recogniser's hypotheses + RTFx.

``cluster=local`` or ``cluster.address=…`` transcribes the chunks as tasks on a Dask cluster
(:mod:`werest.partition.cluster`); each worker builds the recogniser once from the broadcast
``asr``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from werest.cli.blocks import Cluster
from werest.cli.commands._common import (
    build,
    cluster_client,
    name_list,
    print_blocks,
    save_config,
)
from werest.cli.schema import TranscribeSettings
from werest.errors import ConfigError, InputError
from werest.ingest.asr.base import build_transcriber
from werest.ingest.asr.transcribe import (
    AUDIO_SUFFIXES,
    ChunkJob,
    all_failed,
    existing_rows,
    format_summary,
    has_rows,
    log_failures,
    pending,
    read_source,
    rtfx_summary,
    select,
    transcribe_chunk_on_worker,
    transcribe_pending,
    write_failures,
    write_rtfx,
)
from werest.ingest.audio import AudioPolicy
from werest.ingest.table import write_table
from werest.partition.cluster import cluster_runner
from werest.resources import ResourceMonitor

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger("werest.ingest.asr.transcribe")


def run(settings: TranscribeSettings) -> pd.DataFrame | None:
    """Transcribe what ``out`` lacks; write the table, its failures, RTFx and config.

    Returns the output table (None when there is nothing in it).
    """
    source, utterances, base = _todo_source(settings)
    policy = build(settings.audio, AudioPolicy)
    asr = settings.asr.as_dict()
    transcriber = build_transcriber(asr)
    system = settings.system or transcriber.name
    todo = pending(utterances, base, system)
    log.info(
        "%s: %d utterance(s), %d already transcribed, %d to transcribe",
        system,
        len(utterances),
        len(utterances) - len(todo),
        len(todo),
    )
    # nothing to do: no cluster started
    cluster = settings.cluster if len(todo) else Cluster()
    with ResourceMonitor() as monitor, cluster_client(cluster) as client:
        job = ChunkJob(asr, policy)  # a worker builds its recogniser from this
        table, failed = transcribe_pending(
            todo,
            transcriber,
            system,
            base=base,
            out=settings.out,
            policy=policy,
            chunk_size=settings.chunk_size,
            run_chunks=cluster_runner(
                client, transcribe_chunk_on_worker, retries=cluster.retries, job=job
            ),
        )
    _write(settings, source, table, system, todo, failed, monitor.summary)
    return table


def _todo_source(settings: TranscribeSettings):
    """The input (a table, or a folder of audio), its utterances to transcribe (``dataset``,
    ``limit``) and the rows ``out`` already holds."""
    source_path = settings.input
    datasets = name_list(settings.dataset)
    is_folder = source_path.is_dir()
    if is_folder and datasets and len(datasets) > 1:
        raise ConfigError("dataset= names one dataset for a folder input")
    # audio_suffixes=[] takes werest's own list
    suffixes = settings.audio_suffixes or list(AUDIO_SUFFIXES)
    source = read_source(source_path, suffixes, dataset=datasets[0] if datasets else None)
    utterances = select(source.utterances, None if is_folder else datasets, settings.limit)
    return source, utterances, existing_rows(source, settings.out)


def _write(settings: TranscribeSettings, source, table, system, todo, failed, resources) -> None:
    """``out``, its failures, RTFx and config; a run where every clip failed writes nothing."""
    source_path, out = settings.input, settings.out
    if len(todo) and len(failed) == len(todo) and not has_rows(table, system):
        raise InputError(all_failed(failed), path=source_path)  # nothing written
    if table is None:
        raise InputError("nothing to transcribe (limit=0?)", path=source_path)
    failures_path = write_failures(out, system, failed)
    log_failures(failed, failures_path)
    if source.transcripts is not None or not out.exists():
        write_table(table, out)  # the input's rows even when nothing new was added
    summary = rtfx_summary(table, system) | {"resources": resources}
    rtfx_path = write_rtfx(out, summary)
    save_config(settings, out)
    print_blocks(format_summary(summary, len(todo) - len(failed), len(failed)))
    log.info("wrote %s; RTFx %s in %s", out, summary["rtfx"], rtfx_path)

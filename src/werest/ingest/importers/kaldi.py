"""Kaldi ``text`` files: ``utt-id word word ...`` per line, one file per system.

The system name is ``system=`` (one file) or the file's folder name (``exp/<system>/text``)
or its stem when that is not ``text``; ``reference=PATH`` is a Kaldi ``text`` of references
(e.g. ``data/test/text``); ``dataset=`` names the dataset (default: the reference's folder,
else ``kaldi``). A line holding only an id is an empty hypothesis.
"""

from werest.ingest.importers._common import one_file_per_system, read_leading_id_file

load = one_file_per_system(read_leading_id_file, default_dataset="kaldi")

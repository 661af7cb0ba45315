"""sclite ``.trn`` files: ``words words (utt-id)`` per line, one file per system.

The system name is ``system=`` (one file) or the file's stem (``<system>.trn``), or its
folder when the stem is generic (``hyp``); ``reference=PATH`` is the reference ``.trn``;
``dataset=`` names the dataset (default: the reference's folder, else ``sclite``).
"""

from werest.ingest.importers._common import one_file_per_system, read_trailing_id_file

load = one_file_per_system(read_trailing_id_file, default_dataset="sclite")

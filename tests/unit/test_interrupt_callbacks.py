"""A stop signal that arrives while the garbage collector runs a callback (a weak reference's,
a ``__del__``): Python cannot raise from there, so the handler's KeyboardInterrupt would be
printed as "Exception ignored ... Traceback" and lost, and the run would go on (seen once in
CI: ``test_interrupts.py``, an interrupted ``werest estimate``). werest sends it again, so it
stops the run where it can, with no traceback."""

from __future__ import annotations

import importlib
import os
import signal
import threading
import time

import pytest

cli_main = importlib.import_module("werest.cli.main")  # werest.cli.main is also the function


@pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(), reason="signals: main thread"
)
def test_a_stop_signal_lost_in_a_finaliser_is_sent_again(capfd):
    previous = cli_main._stop_signals_as_exceptions()
    assert signal.SIGINT in previous  # pytest leaves SIGINT handled, so werest takes it

    class Finalised:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGINT)  # the handler raises inside __del__
            sum(range(1000))  # bytecodes in the finaliser, where the handler runs

    try:
        with pytest.raises(KeyboardInterrupt):
            dying = Finalised()
            del dying
            for _ in range(500):  # the signal sent again is handled here, in the run
                time.sleep(0.01)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    assert "Exception ignored" not in capfd.readouterr().err

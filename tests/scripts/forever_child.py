"""Starts a worker that is not a daemon (the interpreter's exit joins it) and runs forever."""

import multiprocessing
import time


def sleep_forever() -> None:
    while True:
        time.sleep(1)


if __name__ == "__main__":
    multiprocessing.get_context("fork").Process(target=sleep_forever).start()
    print("worker started", flush=True)
    while True:
        time.sleep(0.05)

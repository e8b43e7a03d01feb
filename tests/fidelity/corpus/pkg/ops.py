from .util import mix


def run(x, steps):
    for _ in range(steps):
        mix(x)

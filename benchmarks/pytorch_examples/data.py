"""Small fake data sets for the pytorch/examples scripts that benchmarks/pytorch_examples/run.sh profiles.

Usage: python data.py OUTDIR [--mnist-train N] [--mnist-test N] [--words N]

Writes, with only the standard library (no torch, no numpy, no download):
  OUTDIR/data/MNIST/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte
      MNIST's raw IDX files (big-endian header, uint8 pixels/labels). torchvision's MNIST
      finds them in ROOT/MNIST/raw and skips its download; vae/main.py and mnist_rnn/main.py
      open '../data', so they run with their working directory one level below OUTDIR/data.
      The images are blurry random blobs with a label-dependent bright square, so that a
      model has something to learn; the contents do not matter for profiling.
  OUTDIR/wikitext/{train,valid,test}.txt
      a Wikitext-2-style corpus (" = Title = " headings, blank lines, space-separated tokens
      with " @-@ " and " , " / " . " as in wikitext, "<unk>" tokens) drawn from a Zipf-like
      vocabulary, for word_language_model/main.py --data OUTDIR/wikitext.
"""

from __future__ import annotations

import argparse
import os
import random
import struct


def write_idx_images(path: str, images: list[bytes], rows: int = 28, cols: int = 28) -> None:
    with open(path, "wb") as f:
        f.write(struct.pack(">IIII", 2051, len(images), rows, cols))
        for img in images:
            f.write(img)


def write_idx_labels(path: str, labels: list[int]) -> None:
    with open(path, "wb") as f:
        f.write(struct.pack(">II", 2049, len(labels)))
        f.write(bytes(labels))


def fake_digit(rng: random.Random, label: int) -> bytes:
    px = bytearray(28 * 28)
    # background noise, mostly dark as in MNIST
    for i in range(0, 28 * 28, 7):
        px[i] = rng.randrange(0, 40)
    # a bright 8x8 square whose position depends on the label
    r0 = 4 + (label // 4) * 6
    c0 = 4 + (label % 4) * 5
    for r in range(r0, min(r0 + 8, 28)):
        for c in range(c0, min(c0 + 8, 28)):
            px[r * 28 + c] = rng.randrange(180, 256)
    return bytes(px)


def make_mnist(root: str, n_train: int, n_test: int, seed: int = 0) -> None:
    raw = os.path.join(root, "data", "MNIST", "raw")
    os.makedirs(raw, exist_ok=True)
    rng = random.Random(seed)
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        labels = [rng.randrange(10) for _ in range(n)]
        images = [fake_digit(rng, y) for y in labels]
        write_idx_images(os.path.join(raw, f"{prefix}-images-idx3-ubyte"), images)
        write_idx_labels(os.path.join(raw, f"{prefix}-labels-idx1-ubyte"), labels)


def make_vocab(rng: random.Random, size: int) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: set[str] = set()
    while len(words) < size:
        n = 1 + min(int(rng.expovariate(0.25)), 11)
        words.add("".join(rng.choice(letters) for _ in range(n)))
    common = ["the", ",", ".", "of", "and", "in", "to", "a", "was", "@-@", "<unk>", "'s", "on", "as"]
    return common + sorted(words)


def make_corpus(path: str, rng: random.Random, vocab: list[str], n_words: int) -> None:
    # Zipf-like weights: word k has weight 1/(k+1)
    weights = [1.0 / (k + 1) for k in range(len(vocab))]
    out: list[str] = [""]
    written = 0
    while written < n_words:
        title = " ".join(rng.choice(vocab[14:]).capitalize() for _ in range(rng.randrange(1, 4)))
        out += [f" = {title} = ", ""]
        for _ in range(rng.randrange(2, 6)):
            n = rng.randrange(40, 160)
            para = rng.choices(vocab, weights=weights, k=n)
            out += [" " + " ".join(para) + " ", ""]
            written += n
    with open(path, "w", encoding="utf8") as f:
        f.write("\n".join(out) + "\n")


def make_wikitext(root: str, n_words: int, seed: int = 1) -> None:
    folder = os.path.join(root, "wikitext")
    os.makedirs(folder, exist_ok=True)
    rng = random.Random(seed)
    vocab = make_vocab(rng, 5000)
    make_corpus(os.path.join(folder, "train.txt"), rng, vocab, n_words)
    make_corpus(os.path.join(folder, "valid.txt"), rng, vocab, n_words // 10)
    make_corpus(os.path.join(folder, "test.txt"), rng, vocab, n_words // 10)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("outdir")
    p.add_argument("--mnist-train", type=int, default=6000)
    p.add_argument("--mnist-test", type=int, default=1000)
    p.add_argument("--words", type=int, default=60000, help="training tokens (valid/test get a tenth)")
    a = p.parse_args()
    make_mnist(a.outdir, a.mnist_train, a.mnist_test)
    make_wikitext(a.outdir, a.words)
    print(
        f"fake MNIST ({a.mnist_train} train, {a.mnist_test} test) "
        f"and wikitext ({a.words} words) in {a.outdir}"
    )


if __name__ == "__main__":
    main()

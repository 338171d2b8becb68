"""The images row of bench/prep, run with /usr/bin/python3 (numpy, h5py, python3-pil).

  images.py make DIR           Fashion-MNIST's test split as DIR/<class>/NNNNN.{png,jpg}: even
                               samples PNG, odd ones JPEG (quality 90), 28x28 grayscale
  images.py peer DIR OUT.h5 HxW WORKERS
                               the Python peer: the loop a user would write (sorted class
                               folders, PIL open + convert("L") + resize(BILINEAR), np.stack,
                               one h5py write with train statistics), with WORKERS processes
                               decoding (multiprocessing.Pool, chunks in file order); prints
                               "peer_s=S" timed after the imports, as slimtrain's own log times
                               its prep
"""
import gzip
import os
import sys
import time

import numpy as np

FM = "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"
NAMES = ["tshirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "boot"]


def make(d):
    from PIL import Image

    with gzip.open(FM) as f:
        x = np.frombuffer(f.read()[16:], dtype=np.uint8).reshape(-1, 28, 28)
    with gzip.open(FM.replace("images-idx3", "labels-idx1")) as f:
        y = np.frombuffer(f.read()[8:], dtype=np.uint8)
    for name in NAMES:
        os.makedirs(os.path.join(d, name), exist_ok=True)
    for i in range(len(x)):
        img = Image.fromarray(x[i])
        base = os.path.join(d, NAMES[int(y[i])], f"{i:05d}")
        if i % 2 == 0:
            img.save(base + ".png")
        else:
            img.save(base + ".jpg", quality=90)


def load(args):
    from PIL import Image

    paths, w, h = args
    out = np.empty((len(paths), 1, h, w), dtype=np.uint8)
    for k, p in enumerate(paths):
        with Image.open(p) as img:
            out[k, 0] = np.asarray(img.convert("L").resize((w, h), Image.BILINEAR))
    return out


def peer(d, out, size, workers):
    import h5py

    start = time.perf_counter()
    h, w = (int(v) for v in size.split("x"))
    classes = sorted(e for e in os.listdir(d) if os.path.isdir(os.path.join(d, e)))
    paths, labels = [], []
    for c, name in enumerate(classes):
        files = sorted(os.listdir(os.path.join(d, name)))
        paths += [os.path.join(d, name, f) for f in files]
        labels += [c] * len(files)
    if workers > 1:
        from multiprocessing import Pool

        step = (len(paths) + 4 * workers - 1) // (4 * workers)
        chunks = [(paths[i:i + step], w, h) for i in range(0, len(paths), step)]
        with Pool(workers) as pool:
            x = np.concatenate(pool.map(load, chunks))
    else:
        x = load((paths, w, h))
    with h5py.File(out, "w") as f:
        f.attrs["format"] = "slimtrain"
        f.attrs["format_version"] = 1
        f.attrs["num_classes"] = len(classes)
        f.attrs["class_names"] = classes
        ds = f.create_dataset("train/x", data=x, chunks=(min(len(x), 1024), 1, h, w))
        ds.attrs["mean"] = x.mean(axis=(0, 2, 3))
        ds.attrs["std"] = x.std(axis=(0, 2, 3))
        f.create_dataset("train/y", data=np.asarray(labels, dtype=np.int64))
    print(f"peer_s={time.perf_counter() - start:.3f} images={len(paths)} workers={workers}")


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    elif sys.argv[1] == "peer":
        peer(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    else:
        sys.exit(f"unknown mode {sys.argv[1]}")

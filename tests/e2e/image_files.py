"""Image folders for the `prep images` tests, written and read back with python3-pil.

  image_files.py folders DIR [--per-class N] [--size S]
        DIR/train/<class>/ and DIR/test/<class>/ from Fashion-MNIST's test split (synthetic
        digits when the dataset is not installed): PNG gray, RGB, RGBA, palette and 16-bit, JPEG
        gray and RGB, some at other sizes than 28x28 so resizing has work to do; DIR/list.txt
        lists the train files as 'path,label' lines
  image_files.py bad DIR       one of each bad file: truncated JPEG and PNG, corrupt PNG (CRC),
        a GIF, a text file, an empty file
  image_files.py check H5 ROOT HxW CHANNELS MODE
        every /train/x sample of prep's output against PIL's convert + resize(BILINEAR) of the
        same file (fit, crop and pad as resize() here says; the order: sorted class folders,
        sorted files); exact where PIL does not resize, within 1 of 255 where it does (and PIL's
        round() may differ from C's lround on .5 in pad's inner size); prints the largest
        difference
"""
import gzip
import io
import os
import sys

import numpy as np
from PIL import Image

FM = "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"
NAMES = ["tshirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "boot"]


def fashion(count):
    if os.path.exists(FM):
        with gzip.open(FM) as f:
            data = np.frombuffer(f.read()[16:], dtype=np.uint8).reshape(-1, 28, 28)
        with gzip.open(FM.replace("images-idx3", "labels-idx1")) as f:
            labels = np.frombuffer(f.read()[8:], dtype=np.uint8)
        return data[:count], labels[:count]
    rng = np.random.default_rng(0)
    return rng.integers(0, 256, (count, 28, 28), dtype=np.uint8), np.arange(count) % 10


def variant(img, k):
    """The k-th way of storing a 28x28 grayscale sample: (PIL image, extension, save options)."""
    rgb = Image.merge("RGB", (img, img.transpose(Image.FLIP_LEFT_RIGHT), img.transpose(Image.FLIP_TOP_BOTTOM)))
    kinds = [
        (img, "png", {}),
        (rgb, "png", {}),
        (rgb.convert("RGBA"), "png", {}),
        (rgb.convert("P", palette=Image.ADAPTIVE, colors=64), "png", {}),
        (img.resize((40, 36), Image.NEAREST), "png", {}),
        (img, "jpg", {"quality": 90}),
        (rgb.resize((33, 45), Image.NEAREST), "jpg", {"quality": 85}),
        (Image.fromarray(np.asarray(img).astype(np.uint16) * 257), "png", {}),
    ]
    return kinds[k % len(kinds)]


def folders(root, per_class, n_test):
    x, y = fashion(4000)
    counts = {}
    list_lines = []
    for i in range(len(x)):
        split = "train" if counts.get(int(y[i]), 0) < per_class else "test"
        if split == "test" and counts.get(int(y[i]), 0) >= per_class + n_test:
            continue
        counts[int(y[i])] = counts.get(int(y[i]), 0) + 1
        image, ext, opts = variant(Image.fromarray(x[i]), i)
        folder = os.path.join(root, split, NAMES[int(y[i])])
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{i:05d}.{ext}")
        image.save(path, **opts)
        if split == "train":
            list_lines.append(f"{os.path.relpath(path, root)},{int(y[i])}")
    with open(os.path.join(root, "list.txt"), "w") as f:
        f.write("# path,label\n" + "\n".join(list_lines) + "\n")


def bad(d):
    os.makedirs(d, exist_ok=True)
    img = Image.fromarray(fashion(1)[0][0])
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=90)
    jpeg = buf.getvalue()
    buf = io.BytesIO()
    img.save(buf, "PNG")
    png = buf.getvalue()
    files = {
        "truncated.jpg": jpeg[: len(jpeg) // 2],
        "truncated.png": png[: len(png) // 2],
        "corrupt.png": png[:40] + bytes([png[40] ^ 0xFF]) + png[41:],
        "empty.png": b"",
        "notes.txt": b"not an image\n",
    }
    for name, data in files.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
    img.save(os.path.join(d, "anim.gif"))


def resize(img, w, h, mode):
    """What --resize means, in PIL: fit stretches; crop resizes the centred box of the output's
    aspect; pad resizes into the largest fitting size and centres it on black."""
    sw, sh = img.size
    if mode == "fit":
        return img.resize((w, h), Image.BILINEAR)
    if mode == "crop":
        s = max(w / sw, h / sh)
        bw, bh = w / s, h / s
        box = ((sw - bw) / 2, (sh - bh) / 2, (sw + bw) / 2, (sh + bh) / 2)
        return img.resize((w, h), Image.BILINEAR, box=box)
    s = min(w / sw, h / sh)
    iw, ih = min(max(round(sw * s), 1), w), min(max(round(sh * s), 1), h)
    out = Image.new(img.mode, (w, h), 0)
    out.paste(img.resize((iw, ih), Image.BILINEAR), ((w - iw) // 2, (h - ih) // 2))
    return out


def check(h5, root, size, channels, mode):
    import h5py

    h, w = (int(v) for v in size.split("x"))
    files = []
    train = os.path.join(root, "train")
    for c in sorted(os.listdir(train)):
        files += sorted(os.path.join(train, c, f) for f in os.listdir(os.path.join(train, c)))
    with h5py.File(h5, "r") as f:
        x = f["train/x"][...]
    assert x.shape == (len(files), channels, h, w), (x.shape, len(files))
    worst = 0
    for i, path in enumerate(files):
        img = Image.open(path)
        # PIL opens 16-bit PNGs as I;16 ("I" after load): its convert cannot narrow them, so
        # take the high byte as slimtrain (and libpng's strip_16) do.
        if img.mode.startswith("I"):
            img = Image.fromarray((np.asarray(img).astype(np.uint32) >> 8).astype(np.uint8))
        img = img.convert("L" if channels == 1 else "RGB")
        resized = img.size != (w, h)
        if resized:
            img = resize(img, w, h, mode)
        want = np.asarray(img, dtype=np.int16).reshape(h, w, channels).transpose(2, 0, 1)
        diff = int(np.abs(want - x[i].astype(np.int16)).max())
        worst = max(worst, diff)
        limit = 1 if resized else 0
        assert diff <= limit, f"{path}: differs from PIL by {diff} (limit {limit})"
    print(f"{len(files)} images match PIL: largest difference {worst}")


if __name__ == "__main__":
    if sys.argv[1] == "folders":
        args = sys.argv[3:]
        per_class = int(args[args.index("--per-class") + 1]) if "--per-class" in args else 6
        n_test = int(args[args.index("--test") + 1]) if "--test" in args else 2
        folders(sys.argv[2], per_class, n_test)
    elif sys.argv[1] == "bad":
        bad(sys.argv[2])
    elif sys.argv[1] == "check":
        check(*sys.argv[2:5], int(sys.argv[5]), sys.argv[6])
    else:
        sys.exit(f"unknown mode {sys.argv[1]}")

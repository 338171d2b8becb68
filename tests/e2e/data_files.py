"""Test data for the prep and interop e2e tests (run with /usr/bin/python3: numpy, h5py).

  data_files.py inputs DIR          small IDX/CSV/NPY inputs, good and bad, with known values
  data_files.py check-prep H5 DIR   a prep output read back by h5py must equal the inputs exactly
  data_files.py write-h5py H5 [--fixed-strings] [--bad-label] [--stats all|train|none]
                [--splits train,test]    a file written the way users write one with h5py: mean/std
                                     on every split's x, on /train/x only, or on none
"""
import gzip
import struct
import sys

import numpy as np

N_TRAIN, N_TEST, H, W = 50, 7, 3, 4


def idx_bytes(array, type_code=0x08):
    header = struct.pack(">BBBB", 0, 0, type_code, array.ndim)
    header += b"".join(struct.pack(">I", d) for d in array.shape)
    return header + array.tobytes()


def images(n, offset):
    return ((np.arange(n * H * W, dtype=np.int64) * 37 + offset) % 256).astype(np.uint8).reshape(n, H, W)


def labels(n, offset):
    return ((np.arange(n) * 3 + offset) % 4).astype(np.uint8)


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def inputs(d):
    tx, ty, vx, vy = images(N_TRAIN, 1), labels(N_TRAIN, 0), images(N_TEST, 5), labels(N_TEST, 1)
    with gzip.open(f"{d}/train-images.gz", "wb") as f:
        f.write(idx_bytes(tx))
    with gzip.open(f"{d}/train-labels.gz", "wb") as f:
        f.write(idx_bytes(ty))
    write(f"{d}/test-images", idx_bytes(vx))
    write(f"{d}/test-labels", idx_bytes(vy))
    write(f"{d}/bad-magic", b"\x1f\x00" + idx_bytes(tx)[2:])
    write(f"{d}/truncated-images", idx_bytes(tx)[:-30])
    write(f"{d}/short-labels", idx_bytes(ty[:-1]))
    write(f"{d}/float-images", idx_bytes(tx.astype(">f4"), 0x0D))

    features = (np.arange(N_TRAIN * 3).reshape(N_TRAIN, 3) * 0.25 - 7).astype(np.float32)
    rows = [",".join([repr(float(v)) for v in features[i]] + [str(int(ty[i]))]) for i in range(N_TRAIN)]
    with gzip.open(f"{d}/train.csv.gz", "wt") as f:
        f.write("f0,f1,f2,label\n" + "\n".join(rows) + "\n")
    bad = list(rows)
    bad[9] = "1.0,2.0,1"
    write(f"{d}/ragged.csv", ("\n".join(bad) + "\n").encode())
    bad = list(rows)
    bad[4] = "1.0,abc,2.0,1"
    write(f"{d}/word.csv", ("\n".join(bad) + "\n").encode())
    bad = list(rows)
    bad[6] = "1.0,nan,2.0,1"
    write(f"{d}/nan.csv", ("\n".join(bad) + "\n").encode())
    np.save(f"{d}/features.npy", features)

    np.save(f"{d}/x.npy", tx.reshape(N_TRAIN, 1, H, W))
    np.save(f"{d}/y.npy", ty.astype(np.int32))
    np.save(f"{d}/x-f8.npy", features.astype(np.float64))
    np.save(f"{d}/x-f2.npy", features.astype(np.float16))
    np.save(f"{d}/x-fortran.npy", np.asfortranarray(features.astype(np.float64)))


def check_prep(h5, d):
    import h5py

    with h5py.File(h5, "r") as f:
        assert f.attrs["format"] == "slimtrain", f.attrs["format"]
        assert int(f.attrs["format_version"]) == 1
        assert int(f.attrs["num_classes"]) == 4
        assert list(f.attrs["class_names"]) == ["a", "b", "c", "d"], list(f.attrs["class_names"])
        assert f["train/x"].dtype == np.uint8 and f["train/y"].dtype == np.int64
        assert f["train/x"].chunks is not None and f["train/x"].chunks[0] >= 1
        assert np.array_equal(f["train/x"][...], images(N_TRAIN, 1)), "train/x differs"
        assert np.array_equal(f["train/y"][...], labels(N_TRAIN, 0)), "train/y differs"
        assert np.array_equal(f["test/x"][...], images(N_TEST, 5)), "test/x differs"
        assert np.array_equal(f["test/y"][...], labels(N_TEST, 1)), "test/y differs"
        x = images(N_TRAIN, 1).astype(np.float64)
        assert abs(f["train/x"].attrs["mean"][0] - x.mean()) < 1e-3
        assert abs(f["train/x"].attrs["std"][0] - x.std()) < 1e-3
    print("h5py read back", h5, "exactly")


def write_h5py(h5, fixed, broken=False, stats="all", splits=("train", "test"), classes=None):
    import h5py

    n, c = 10, 3
    x = ((np.arange(n * c * H * W) * 7) % 256).astype(np.uint8).reshape(n, c, H, W)
    y = (np.arange(n) % 3).astype(np.int32)
    if broken:
        y[3] = 7
    with h5py.File(h5, "w") as f:
        if fixed:
            f.attrs["format"] = np.bytes_("slimtrain")
            f.attrs.create("class_names", np.array([b"cat", b"dog", b"eel"], dtype="S8"))
            f.attrs.create("num_classes", 3, dtype=np.int16)
            f.attrs.create("format_version", 1, dtype=np.uint8)
        else:
            f.attrs["format"] = "slimtrain"
            f.attrs["class_names"] = ["cat", "dog", "eel"]
            f.attrs["num_classes"] = 3
            f.attrs["format_version"] = 1
        if classes is not None:  # a damaged count, and no names to check it against
            f.attrs["num_classes"] = classes
            del f.attrs["class_names"]
        for split, rows in (("train", slice(0, 8)), ("test", slice(8, 10))):
            if split not in splits:
                continue
            ds = f.create_dataset(f"{split}/x", data=x[rows], chunks=(2, c, H, W))
            if stats == "all" or (stats == "train" and split == "train"):
                ds.attrs["mean"] = x[:8].mean(axis=(0, 2, 3)).astype(np.float64)
                ds.attrs["std"] = x[:8].std(axis=(0, 2, 3)).astype(np.float32)
            f.create_dataset(f"{split}/y", data=y[rows])


if __name__ == "__main__":
    if sys.argv[1] == "inputs":
        inputs(sys.argv[2])
    elif sys.argv[1] == "check-prep":
        check_prep(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "write-h5py":
        def value(flag, default):
            return sys.argv[sys.argv.index(flag) + 1] if flag in sys.argv else default

        write_h5py(sys.argv[2], "--fixed-strings" in sys.argv, "--bad-label" in sys.argv,
                   value("--stats", "all"), value("--splits", "train,test").split(","),
                   int(value("--num-classes", "0")) or None)
    else:
        sys.exit(f"unknown mode {sys.argv[1]}")

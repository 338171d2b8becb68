"""Checks of a slimtrain report, for tests/e2e/report.sh.

  selfcontained FILE            nothing in it is fetched: no script, link, import, src or url()
  points FILE SERIES N          the polyline of SERIES plots N points (N may be '>0')
  count FILE REGEX N            REGEX occurs N times in the file
  png FILE [#rrggbb ...]        the screenshot is not blank, and each colour covers >= 150 pixels
"""
import re
import sys


def fail(message):
    print("  " + message)
    sys.exit(1)


def selfcontained(path):
    text = open(path, encoding="utf-8").read()
    for pattern in (r"<script", r"<link", r"@import", r"url\(", r"\ssrc=", r"\shref="):
        if re.search(pattern, text, re.I):
            fail(f"{path} contains {pattern}")
    for url in re.findall(r"https?://[^\"' <>]+", text):
        if url != "http://www.w3.org/2000/svg":
            fail(f"{path} names {url}")


def compare(value, expected):
    return value > 0 if expected == ">0" else value == int(expected)


def points(path, series, expected):
    text = open(path, encoding="utf-8").read()
    found = re.findall(r'<polyline class="series" data-series="([^"]*)" data-points="(\d+)"[^>]*points="([^"]*)"', text)
    counts = [(int(n), len(p.split())) for name, n, p in found if name == series]
    if not counts:
        fail(f"no series '{series}' among {sorted(set(n for n, _, _ in found))}")
    declared, drawn = counts[0]
    if declared != drawn:
        fail(f"series '{series}' declares {declared} points but draws {drawn}")
    if not compare(drawn, expected):
        fail(f"series '{series}' has {drawn} points, expected {expected}")


def count(path, pattern, expected):
    n = len(re.findall(pattern, open(path, encoding="utf-8").read()))
    if not compare(n, expected):
        fail(f"'{pattern}' occurs {n} times, expected {expected}")


def png(path, *colours):
    from PIL import Image
    image = Image.open(path).convert("RGB")
    pixels = list(image.getdata())
    ink = sum(1 for p in pixels if min(p) < 235)
    if ink < 0.02 * len(pixels):
        fail(f"{path}: only {ink} of {len(pixels)} pixels are not background: blank?")
    for colour in colours:
        want = tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))
        n = sum(1 for p in pixels if max(abs(a - b) for a, b in zip(p, want)) <= 40)
        if n < 150:
            fail(f"{path}: colour {colour} covers {n} pixels: the curve is not drawn")
        print(f"  {colour}: {n} pixels")


if __name__ == "__main__":
    {"selfcontained": selfcontained, "points": points, "count": count, "png": png}[sys.argv[1]](*sys.argv[2:])

"""Text files in the encodings and shapes people have (issue 60), for tests/e2e/text_encodings.sh.

text_encodings.py DIR: writes into DIR the same 60 records ("text,label", labels ham, spam and
café) as UTF-8, UTF-16 with a byte order mark, UTF-16LE without one, Windows-1252, GB18030 and
Shift JIS; labels holding a NUL byte and a Latin-1 byte; a file whose header is a column name
given by index (banking77's "text,category"); JSONL labels written as floats (1.0); a file of one
class; a record with too few fields; and a binary header.
"""
import json
import sys

folder = sys.argv[1]
words = {"ham": "hello friend see you at lunch tomorrow thanks".split(),
         "spam": "win a prize free call now claim your cash".split(),
         "café": "espresso latte croissant table terrace menu".split()}
rows = []
for i in range(60):
    label = ("ham", "spam", "café")[i % 3]
    ws = words[label]
    rows.append((" ".join(ws[(i + k) % len(ws)] for k in range(6)), label))
text = "text,label\n" + "".join(f"{t} {i},{label}\n" for i, (t, label) in enumerate(rows))


def write(name, data):
    with open(f"{folder}/{name}", "wb") as f:
        f.write(data)


write("utf8.csv", text.encode("utf-8"))
write("utf16.csv", text.encode("utf-16"))  # a byte order mark, then little-endian
write("utf16le.csv", text.encode("utf-16-le"))  # no mark
write("utf32be.csv", b"\x00\x00\xfe\xff" + text.encode("utf-32-be"))  # a big-endian mark
write("cp1252.csv", text.replace("espresso", "espresso €").encode("cp1252"))
write("gb18030.csv", text.replace("latte", "拿铁").encode("gb18030"))
# Shift JIS has no é: its third class is カフェ.
write("shift_jis.csv", text.replace("menu", "メニュー").replace("café", "カフェ").encode("shift_jis"))
write("bad_labels.csv", text.encode() + b"more text,a\x00x\nother text,caf\xe9\n")
write("indexed.csv", ("text,category\n" + text.split("\n", 1)[1]).encode())
write("floats.jsonl", "".join(json.dumps({"text": t, "label": float(i % 2)}) + "\n"
                              for i, (t, _) in enumerate(rows)).encode())
write("one_class.csv", ("text,label\n" + "".join(f"{t},ham\n" for t, _ in rows)).encode())
write("short.csv", ("text,label,source\n" + "".join(f"{t},{l},web\n" for t, l in rows[:5])
                    + "a record cut short,ham\n").encode())
write("binary.csv", b"\xff\x00\x01text,label\n" + text.split("\n", 1)[1].encode())

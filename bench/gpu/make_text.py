"""A synthetic text-classification CSV for bench/gpu's HuggingFace row (the GPU machine has no
Debian fortunes): sentences of 8 to 160 words drawn from a made-up lexicon of 6000 words, in
CLASSES classes (each class's sentences lean on its own share of the lexicon), header
text,category. Speed depends on the lengths, not the words; the file only needs to be the same
for slimtrain and its peer.

  make_text.py OUT.csv N CLASSES
"""
import csv
import random
import sys


def main():
    out, n, classes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(7)
    letters = "abcdefghijklmnopqrstuvwxyz"
    lexicon = ["".join(rng.choice(letters) for _ in range(rng.randint(2, 10))) for _ in range(6000)]
    with open(out, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["text", "category"])
        for i in range(n):
            c = i % classes
            own = lexicon[c::classes]
            words = [rng.choice(own if rng.random() < 0.3 else lexicon)
                     for _ in range(int(rng.triangular(8, 160, 24)))]
            w.writerow([" ".join(words), f"class{c}"])


if __name__ == "__main__":
    main()

"""TCP probes between simulated nodes (tests/cluster): this machine has neither ping nor iperf.

  netprobe.py reach HOST [SECONDS]   exit 0 if HOST answers within SECONDS (a refused connection
                                     counts: the host's kernel answered), 1 if it does not
  netprobe.py sink PORT              serve connections one after another: read to EOF, reply with
                                     the byte count
  netprobe.py send HOST PORT BYTES   send BYTES to a sink; print "BYTES SECONDS MB/s" (1 MB = 1e6
                                     bytes), timed from connect to the sink's reply
"""
import socket
import sys
import time

CHUNK = 1 << 20


def reach(host, seconds):
    try:
        # Port 9 (discard): nothing listens on it here, so an answer is a refusal.
        socket.create_connection((host, 9), timeout=seconds).close()
    except ConnectionRefusedError:
        pass
    except OSError as e:  # timeout, no route, host unreachable
        print(f"{host} does not answer: {e}", file=sys.stderr)
        return 1
    return 0


def sink(port):
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", port))
    srv.listen(1)
    buf = bytearray(CHUNK)
    while True:
        conn, _ = srv.accept()
        with conn:
            total = 0
            while True:
                n = conn.recv_into(buf)
                if n == 0:
                    break
                total += n
            conn.sendall(str(total).encode())


def send(host, port, nbytes):
    deadline = time.monotonic() + 10
    while True:  # the sink may still be starting
        try:
            conn = socket.create_connection((host, port), timeout=10)
            break
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    start = time.monotonic()
    block = memoryview(bytes(CHUNK))
    left = nbytes
    while left > 0:
        conn.sendall(block[:min(left, CHUNK)])
        left -= min(left, CHUNK)
    conn.shutdown(socket.SHUT_WR)
    conn.settimeout(600)
    got = int(conn.recv(64).decode())
    seconds = time.monotonic() - start
    conn.close()
    if got != nbytes:
        print(f"sink received {got} of {nbytes} bytes", file=sys.stderr)
        return 1
    print(f"{nbytes} {seconds:.3f} {nbytes / seconds / 1e6:.1f}")
    return 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "reach":
        return reach(argv[1], float(argv[2]) if len(argv) > 2 else 1.0)
    if len(argv) == 2 and argv[0] == "sink":
        return sink(int(argv[1]))
    if len(argv) == 4 and argv[0] == "send":
        return send(argv[1], int(argv[2]), int(argv[3]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""A large synthetic okb store for bench/serve-large: a built store plus N made-up nodes.

    bench/large_store.py FROM.sqlite N OUT.sqlite [--no-lines]

Copies the store FROM (the masters knowledge base) to OUT and adds N nodes, each a legal
position no game reaches: the two kings on e1 and e8 and, on each file, no pawn or one
White pawn on rank 2, 3 or 4 and no pawn or one Black pawn on rank 7, 6 or 5 (16 states
a file, so 16^8 positions; none gives check). Node i's columns other than its id,
position and FEN are those of one real node with names (and engine lines, when FROM
has them and --no-lines is not given), so answers are of a real size; its children are
nodes 2i+1 and 2i+2 (a binary tree), with that node's first move counts. SQLite makes the
rows itself (50 M nodes in about 7 minutes, 22.3 GiB without engine lines). The indexes
are built after the rows, as okb's store step does; then okb's own code adds each node's
answer in one row (`node_answers`, as the store step writes it for a store that large).
Beside OUT goes a `manifest.json` with the store's BLAKE3 (Python's `blake3` package), as
a make writes it, so that `okb serve` need not hash the whole file at start-up.
`fen(i)` gives node i's FEN, for the benchmark's requests.
"""
import json
import os, shutil, sqlite3, subprocess, sys, time

# Per 4-file group state (16 bits: 4 bits a file), the six rank masks of those files:
# White pawns on ranks 2, 3, 4, Black pawns on ranks 7, 6, 5.
def _group_masks(value):
    masks = [0] * 6
    for f in range(4):
        d = value >> (4 * f) & 15
        white, black = d & 3, d >> 2
        if white:
            masks[white - 1] |= 1 << f
        if black:
            masks[2 + black] |= 1 << f
    return masks

_GROUPS = [_group_masks(v) for v in range(1 << 16)]


def _rank_text(mask, piece):
    text, empty = "", 0
    for f in range(8):
        if mask >> f & 1:
            text += (str(empty) if empty else "") + piece
            empty = 0
        else:
            empty += 1
    return text + (str(empty) if empty else "")

_WHITE = [_rank_text(m, "P") for m in range(256)]
_BLACK = [_rank_text(m, "p") for m in range(256)]


def epd(i):
    """Node i's position identity (placement, side, castling, en passant)."""
    lo, hi = _GROUPS[i & 0xFFFF], _GROUPS[i >> 16 & 0xFFFF]
    m = [lo[k] | hi[k] << 4 for k in range(6)]
    ranks = ["4k3", _BLACK[m[3]], _BLACK[m[4]], _BLACK[m[5]], _WHITE[m[2]], _WHITE[m[1]], _WHITE[m[0]], "4K3"]
    return "/".join(ranks) + " w - -"


def fen(i):
    """Node i's FEN."""
    return epd(i) + " 0 1"


def node_id(i):
    return f"synthetic-{i:012d}"


def generate(source, n, out, lines=True):
    """OUT: a copy of SOURCE with n synthetic nodes. The rows are made by SQLite itself
    (a recursive count joined to tables of rank texts), about a million nodes a few
    seconds, so that 50 M nodes take minutes, not hours. Without `lines`, the nodes keep
    their template's evaluation but not its engine lines (as in a real store that large,
    whose engine annotates a small part of it)."""
    tmp = out + ".tmp"
    shutil.copyfile(source, tmp)
    conn = sqlite3.connect(tmp, isolation_level=None)
    conn.executescript("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -1048576;"
                       "PRAGMA temp_store = MEMORY;")
    columns = [r[1] for r in conn.execute("PRAGMA table_info(opening_nodes)")]
    # A node with names, engine lines and several moves: answers of a real size.
    template = conn.execute(
        "SELECT * FROM opening_nodes WHERE opening_name IS NOT NULL "
        "ORDER BY stockfish_lines IS NULL, game_count DESC LIMIT 1 OFFSET 20").fetchone()
    edge = conn.execute("SELECT game_count, white_wins, draws, black_wins, avg_rating FROM node_children "
                        "WHERE parent_id = ? ORDER BY rank LIMIT 1", (template[0],)).fetchone()
    template = list(template)
    if not lines:
        template[columns.index("stockfish_lines")] = None
    conn.executescript("DROP INDEX opening_nodes_position; DROP INDEX node_children_child;")
    _helper_tables(conn, columns, template, edge)
    def name(i):
        return f"printf('synthetic-%012d', {i})"
    ranks = " || '/' || ".join(["'4k3'", "b3.t", "b4.t", "b5.t", "w2.t", "w1.t", "w0.t", "'4K3 w - -'"])
    pick = {"node_id": name("n.i"), "position_key": f"({ranks})", "fen": f"({ranks}) || ' 0 1'"}
    cells = ", ".join(pick.get(c, f"tpl.{c}") for c in columns)
    joins = " ".join(f"JOIN ranks_{side} {side}{k} ON {side}{k}.mask = (lo.m{k} | (hi.m{k} << 4))"
                     for side, ks in (("w", (0, 1, 2)), ("b", (3, 4, 5))) for k in ks)
    conn.execute("BEGIN")
    conn.execute(f"WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < {n}) "
                 f"INSERT INTO opening_nodes SELECT {cells} FROM n CROSS JOIN tpl "
                 f"JOIN groups lo ON lo.v = (n.i & 65535) JOIN groups hi ON hi.v = ((n.i >> 16) & 65535) {joins}")
    # Node i's children are nodes 2i+1 (a3) and 2i+2 (h3): in key order, every insert an append.
    conn.execute(f"WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < {n}) "
                 "INSERT INTO node_children (parent_id, child_id, move_san, move_uci, rank, game_count, "
                 "white_wins, draws, black_wins, avg_rating) "
                 f"SELECT {name('n.i')}, {name('2 * n.i + 1 + k.k')}, k.san, k.uci, k.k, e.game_count, e.white_wins, "
                 "e.draws, e.black_wins, e.avg_rating FROM n CROSS JOIN kids k CROSS JOIN edge e "
                 f"WHERE 2 * n.i + 1 + k.k < {n}")
    conn.execute("COMMIT")
    conn.executescript("CREATE UNIQUE INDEX opening_nodes_position ON opening_nodes (position_key);"
                       "CREATE INDEX node_children_child ON node_children (child_id);")
    conn.close()
    add_answers(tmp)
    os.replace(tmp, out)
    write_manifest(out)


def has_answers(store):
    """Whether `store` keeps its node answers one row per position (as okb's store step
    writes them for a store over `[store] answers_above` nodes)."""
    return _has_rows(store, "node_answers")


def has_named_summary(store):
    """Whether `store` keeps its named summary (the tally of its nodes that okb serve's
    answers by name need, written with the node answers) and its node count in its
    metadata, recorded with it."""
    if not _has_rows(store, "named_summary"):
        return False
    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT EXISTS (SELECT 1 FROM meta WHERE key = 'nodes')").fetchone()[0] == 1
    finally:
        conn.close()


def _has_rows(store, table):
    """Whether `store` has `table` (an okb of its time may not have written it) with a row."""
    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        return conn.execute(f"SELECT EXISTS (SELECT 1 FROM {table})").fetchone()[0] == 1
    except sqlite3.OperationalError:
        return False
    finally:
        conn.close()


def add_answers(store, summary_only=False):
    """Adds the node answers and the named summary to `store` with okb's own code
    (examples/store_answers.rs), as the store step adds them to a store that large; with
    `summary_only`, the named summary alone (to a store whose answers an earlier okb added)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet", "--example", "store_answers"],
                   cwd=root, check=True)
    flags = ["--summary"] if summary_only else []
    subprocess.run([os.path.join(root, "target", "release", "examples", "store_answers"), *flags, store],
                   check=True)


def _helper_tables(conn, columns, template, edge):
    """Temporary tables the generating queries join: each 16-bit group's six rank masks,
    the rank texts by mask, the template row, the two moves and the edge counts."""
    conn.execute("CREATE TEMP TABLE groups (v INTEGER PRIMARY KEY, m0, m1, m2, m3, m4, m5)")
    conn.executemany("INSERT INTO groups VALUES (?, ?, ?, ?, ?, ?, ?)", ((v, *m) for v, m in enumerate(_GROUPS)))
    for side, texts in (("w", _WHITE), ("b", _BLACK)):
        conn.execute(f"CREATE TEMP TABLE ranks_{side} (mask INTEGER PRIMARY KEY, t TEXT)")
        conn.executemany(f"INSERT INTO ranks_{side} VALUES (?, ?)", enumerate(texts))
    conn.execute(f"CREATE TEMP TABLE tpl ({', '.join(columns)})")
    conn.execute(f"INSERT INTO tpl VALUES ({','.join('?' * len(columns))})", template)
    conn.execute("CREATE TEMP TABLE kids (k INTEGER, san TEXT, uci TEXT)")
    conn.executemany("INSERT INTO kids VALUES (?, ?, ?)", [(0, "a3", "a2a3"), (1, "h3", "h2h3")])
    conn.execute("CREATE TEMP TABLE edge (game_count, white_wins, draws, black_wins, avg_rating)")
    conn.execute("INSERT INTO edge VALUES (?, ?, ?, ?, ?)", edge)


def write_manifest(store):
    """manifest.json beside `store` with its hash, as a make's release manifest has it."""
    import blake3
    hasher = blake3.blake3(max_threads=blake3.blake3.AUTO)
    hasher.update_mmap(store)
    entry = {"path": os.path.basename(store), "step": "store", "blake3": hasher.hexdigest(), "bytes": os.path.getsize(store)}
    with open(os.path.join(os.path.dirname(os.path.abspath(store)), "manifest.json"), "w") as f:
        json.dump({"store": entry, "outputs": []}, f)


def main():
    if len(sys.argv) not in (4, 5) or sys.argv[4:] not in ([], ["--no-lines"]):
        sys.exit(__doc__)
    source, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    started = time.perf_counter()
    generate(source, n, out, lines="--no-lines" not in sys.argv)
    print(f"{out}: {n} synthetic nodes added in {time.perf_counter() - started:.1f} s, {os.path.getsize(out) / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Claude Code transcripts for the import's scale figures (issue 22 item 6).

    python3 benches/import_scale.py OUT.jsonl CALLS RESULT_BYTES

writes a transcript shaped as Claude Code 2.1 writes them: each call of a
model message its own assistant entry (messages of one to three calls,
sharing `message.id`), each result parented on the entry that made its
call (so the results of a batch sit on branches), with `toolUseResult`
beside it. Reads, Bash, Grep and Glob in turn; a Read's result and its
`toolUseResult.file.content` are RESULT_BYTES each.

    python3 benches/import_scale.py /tmp/c5000.jsonl 5000 400     # 4.6 MB
    python3 benches/import_scale.py /tmp/c100m.jsonl 3500 40000   # 99.7 MB
    /usr/bin/time -v target/release/harness import claude /tmp/c5000.jsonl -o /tmp/i5k
"""

import json
import random
import sys


def main():
    out, calls, body = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    cwd = "/home/dev/big"
    rng = random.Random(1)
    text = ("x" * 79 + "\n") * (body // 80)
    with open(out, "w") as f:
        def put(entry):
            f.write(json.dumps(entry) + "\n")

        put({"parentUuid": None, "isSidechain": False, "type": "user", "uuid": "u0",
             "cwd": cwd, "sessionId": "b", "message": {"role": "user", "content": "go"}})
        parent, made, message = "u0", 0, 0
        while made < calls:
            message += 1
            batch = []
            for n in range(made, min(made + rng.choice([1, 1, 1, 2, 3]), calls)):
                kind = n % 4
                name, args = [
                    ("Read", {"file_path": f"{cwd}/f{n % 50}.txt"}),
                    ("Bash", {"command": f"echo {n}"}),
                    ("Grep", {"pattern": "x+", "output_mode": "content", "-n": True}),
                    ("Glob", {"pattern": "**/*.txt"}),
                ][kind]
                put({"parentUuid": parent, "isSidechain": False, "type": "assistant",
                     "uuid": f"a{n}", "cwd": cwd, "sessionId": "b",
                     "message": {"id": f"msg_{message}", "role": "assistant",
                                 "content": [{"type": "tool_use", "id": f"t{n}", "name": name,
                                              "input": args}]}})
                batch.append((n, kind))
                parent = f"a{n}"
            for n, kind in batch:
                content, recorded = [
                    (text, {"type": "text", "file": {"filePath": f"{cwd}/f.txt", "content": text,
                                                     "numLines": 10, "startLine": 1,
                                                     "totalLines": 10}}),
                    (text[: body // 4], {"stdout": text[: body // 4], "stderr": "",
                                         "interrupted": False}),
                    (text[: body // 4], {"mode": "content", "content": "", "numLines": 0}),
                    ("No files found", {"filenames": [], "numFiles": 0, "truncated": False}),
                ][kind]
                put({"parentUuid": f"a{n}", "isSidechain": False, "type": "user",
                     "uuid": f"r{n}", "cwd": cwd, "sessionId": "b",
                     "sourceToolAssistantUUID": f"a{n}",
                     "message": {"role": "user", "content": [
                         {"type": "tool_result", "tool_use_id": f"t{n}", "content": content}]},
                     "toolUseResult": recorded})
                parent = f"r{n}"
            made += len(batch)


if __name__ == "__main__":
    main()

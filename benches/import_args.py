#!/usr/bin/env python3
"""Sessions whose bulk is in the calls' arguments, for the import's memory
figures (issue 42 item 6).

    python3 benches/import_args.py FORMAT OUT CALLS CONTENT_BYTES

FORMAT is `gemini` (one JSON document, as Gemini CLI writes `session-*.json`:
each model message one `write_file` call whose `content` is CONTENT_BYTES,
its result a short line) or `claude` (a Claude Code transcript: each call a
`Write` of CONTENT_BYTES in an assistant entry, its short result in the next
entry).

    python3 benches/import_args.py gemini /tmp/g100m.json 2500 40000    # 100 MB
    python3 benches/import_args.py gemini /tmp/g300m.json 7500 40000    # 300 MB
    python3 benches/import_args.py claude /tmp/c100m.jsonl 2500 40000   # 100 MB
    /usr/bin/time -f '%M KiB %e s' target/release/harness import gemini /tmp/g100m.json -o /tmp/ig
"""

import hashlib
import json
import sys


def main():
    kind, out, calls, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    cwd = "/home/dev/big"
    line = "y" * 79 + "\n"
    with open(out, "w") as f:
        if kind == "gemini":
            project = hashlib.sha256(cwd.encode()).hexdigest()
            f.write('{\n  "sessionId": "big",\n  "projectHash": "%s",\n' % project)
            f.write('  "startTime": "2026-01-01T00:00:00.000Z",\n  "messages": [\n')
            for n in range(calls):
                content = (f"{n}\n" + line * (size // 80))[:size]
                message = {
                    "id": f"m{n}", "type": "gemini", "timestamp": "2026-01-01T00:00:00.000Z",
                    "content": "",
                    "toolCalls": [{
                        "id": f"write_file-{n}", "name": "write_file",
                        "args": {"file_path": f"{cwd}/f{n % 50}.txt", "content": content},
                        "result": [{"functionResponse": {"id": f"write_file-{n}",
                                                         "name": "write_file",
                                                         "response": {"output": "Wrote the file."}}}],
                        "status": "success",
                    }],
                }
                sep = ",\n" if n + 1 < calls else "\n"
                f.write("    " + json.dumps(message, indent=None) + sep)
            f.write("  ]\n}\n")
        elif kind == "claude":
            def put(entry):
                f.write(json.dumps(entry) + "\n")

            put({"parentUuid": None, "isSidechain": False, "type": "user", "uuid": "u0",
                 "cwd": cwd, "sessionId": "b", "message": {"role": "user", "content": "go"}})
            parent = "u0"
            for n in range(calls):
                content = (f"{n}\n" + line * (size // 80))[:size]
                put({"parentUuid": parent, "isSidechain": False, "type": "assistant",
                     "uuid": f"a{n}", "cwd": cwd, "sessionId": "b",
                     "message": {"id": f"msg_{n}", "role": "assistant", "content": [
                         {"type": "tool_use", "id": f"t{n}", "name": "Write",
                          "input": {"file_path": f"{cwd}/f{n % 50}.txt", "content": content}}]}})
                put({"parentUuid": f"a{n}", "isSidechain": False, "type": "user",
                     "uuid": f"r{n}", "cwd": cwd, "sessionId": "b",
                     "message": {"role": "user", "content": [
                         {"type": "tool_result", "tool_use_id": f"t{n}",
                          "content": f"File created successfully at: {cwd}/f{n % 50}.txt"}]}})
                parent = f"r{n}"
        else:
            sys.exit(f"unknown format {kind}: gemini or claude")


if __name__ == "__main__":
    main()

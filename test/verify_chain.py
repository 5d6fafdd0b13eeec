#!/usr/bin/env python3
"""Independent verifier for harnesshost JSONL journal exports (standard library only).

Each line is a LogRecord in proto3-JSON: {"seq":"1","prev_hash":"","content_hash":"...","fence":"1","event":{...}}.
content_hash must equal lowercase hex sha256 of the RFC 8785 (JCS) canonical form of
{"event": <event as written>, "prev_hash": <prev>, "seq": "<n>"}; seqs must be dense from 1 and each
prev_hash must equal the previous record's content_hash ("" at seq 1).

Usage: verify_chain.py FILE   -> prints "ok N records" and exits 0, or "seq N: ..." and exits 1.
"""
import hashlib
import json
import math
import sys


class NotCanonical(Exception):
    pass


def jcs_string(s):
    out = ['"']
    for ch in s:
        cp = ord(ch)
        if 0xD800 <= cp <= 0xDFFF:
            raise NotCanonical("string holds a lone surrogate")
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\b":
            out.append("\\b")
        elif ch == "\f":
            out.append("\\f")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif cp < 0x20:
            out.append("\\u%04x" % cp)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def jcs_number(value):
    """ES6 Number.prototype.toString of an IEEE double (what JSON.stringify emits)."""
    try:
        x = float(value)
    except OverflowError:
        raise NotCanonical("number is out of double range")
    if math.isnan(x) or math.isinf(x):
        raise NotCanonical("number is not finite")
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    text = repr(abs(x))  # shortest round-trip digits
    mantissa, _, exp_text = text.partition("e")
    exponent = int(exp_text) if exp_text else 0
    int_part, _, frac_part = mantissa.partition(".")
    digits = int_part + frac_part
    point = len(int_part) + exponent  # value = 0.digits * 10^point
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0") or "0"
    k, n = len(digits), point
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        e_text = ("+" if e >= 0 else "-") + str(abs(e))
        body = (digits if k == 1 else digits[0] + "." + digits[1:]) + "e" + e_text
    return sign + body


def utf16_key(s):
    return s.encode("utf-16-be", "surrogatepass")


def jcs(value):
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return jcs_number(value)
    if isinstance(value, str):
        return jcs_string(value)
    if isinstance(value, list):
        return "[" + ",".join(jcs(v) for v in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value.keys(), key=utf16_key)
        return "{" + ",".join(jcs_string(k) + ":" + jcs(value[k]) for k in keys) + "}"
    raise NotCanonical("not a JSON value: %r" % type(value).__name__)


def reject_duplicates(pairs):
    obj = {}
    for k, v in pairs:
        if k in obj:
            raise NotCanonical("duplicate key %r" % k)
        obj[k] = v
    return obj


def content_hash(prev, seq, event):
    canonical = jcs({"event": event, "prev_hash": prev, "seq": str(seq)})
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def parse_seq(raw):
    text = str(raw) if isinstance(raw, int) and not isinstance(raw, bool) else raw
    if not isinstance(text, str) or not text.isdigit() or text.startswith("0"):
        return None
    return int(text)


def verify(path):
    expected, prev = 1, ""
    with open(path, encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line, object_pairs_hook=reject_duplicates)
            except (ValueError, NotCanonical) as err:
                return "seq %d: line %d is not valid JSON (%s)" % (expected, line_no, err)
            if not isinstance(record, dict):
                return "seq %d: line %d is not a JSON object" % (expected, line_no)
            seq = parse_seq(record.get("seq"))
            if seq is None:
                return "seq %d: line %d has a missing or invalid seq" % (expected, line_no)
            if seq != expected:
                return "seq %d: sequence gap or disorder (line %d holds seq %d)" % (expected, line_no, seq)
            event = record.get("event")
            if not isinstance(event, dict):
                return "seq %d: record has no event object" % seq
            stored_prev = record.get("prev_hash", "")
            stored_hash = record.get("content_hash", "")
            if stored_prev != prev:
                return "seq %d: prev_hash mismatch" % seq
            try:
                computed = content_hash(prev, seq, event)
            except NotCanonical as err:
                return "seq %d: event cannot be canonicalised (%s)" % (seq, err)
            if computed != stored_hash:
                return "seq %d: content_hash mismatch (computed %s, stored %s)" % (seq, computed, stored_hash)
            prev = stored_hash
            expected += 1
    print("ok %d records" % (expected - 1))
    return None


def main(argv):
    if len(argv) != 2:
        print("usage: verify_chain.py FILE", file=sys.stderr)
        return 2
    problem = verify(argv[1])
    if problem is not None:
        print(problem)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

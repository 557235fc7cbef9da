"""The harness's own promise for `make test-sanitize`: a sanitizer report that the server writes to
its stderr fails the test, even when the server exits with 0 or the test does not check the exit
code. A small stand-in server (a Python script in place of the binary) plays the part."""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

import harness

FAKE_SERVER = textwrap.dedent("""\
    import http.server, os, signal, sys, threading

    REPORT = os.environ.get("FAKE_REPORT", "")

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()
        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print("Switchboard test listening on 127.0.0.1:%d" % server.server_address[1], flush=True)

    def on_term(signo, frame):
        sys.stderr.write("[info] stopped cleanly\\n" + REPORT)
        sys.stderr.flush()
        os._exit(0)

    signal.signal(signal.SIGTERM, on_term)
    threading.Event().wait(60)
""")

LEAK_REPORT = textwrap.dedent("""\

    =================================================================
    ==4242==ERROR: LeakSanitizer: detected memory leaks

    Direct leak of 5120 byte(s) in 1 object(s) allocated from:
        #0 0x7f in operator new(unsigned long)
    SUMMARY: AddressSanitizer: 5120 byte(s) leaked in 1 allocation(s).
""")

UBSAN_REPORT = "src/util/x.cpp:12:7: runtime error: signed integer overflow\n"


class SanitizerReportTest(unittest.TestCase):

    def setUp(self):
        fd, self.script = tempfile.mkstemp(suffix=".py", prefix="sb-fake-server-")
        with os.fdopen(fd, "w") as f:
            f.write("#!%s\n%s" % (sys.executable, FAKE_SERVER))
        os.chmod(self.script, 0o700)
        self.addCleanup(os.unlink, self.script)
        saved_bin = harness.BIN
        harness.BIN = self.script
        self.addCleanup(setattr, harness, "BIN", saved_bin)
        saved_reports = list(harness.SANITIZER_REPORTS)
        self.addCleanup(harness.SANITIZER_REPORTS.__setitem__, slice(None), saved_reports)

    def run_server(self, report, check):
        srv = harness.Server(env={"FAKE_REPORT": report})
        self.addCleanup(srv.cleanup)
        srv.start()
        self.assertEqual(srv.req("GET", "/healthz")[0], 200)
        return srv.stop(check=check)

    def test_a_clean_exit_passes(self):
        self.assertEqual(self.run_server("", check=True), 0)
        self.assertEqual(harness.SANITIZER_REPORTS, [])

    def test_a_leak_report_at_exit_fails_the_stop_even_with_exit_code_0(self):
        for check in (True, False):
            with self.assertRaises(AssertionError) as caught:
                self.run_server(LEAK_REPORT, check=check)
            self.assertIn("ERROR: LeakSanitizer: detected memory leaks", str(caught.exception))
            self.assertIn("5120 byte(s)", str(caught.exception))
        # Both are kept for the check at exit, which fails the run if a test swallowed them.
        self.assertEqual(len(harness.SANITIZER_REPORTS), 2)

    def test_an_undefined_behaviour_report_fails_the_stop(self):
        with self.assertRaises(AssertionError) as caught:
            self.run_server(UBSAN_REPORT, check=True)
        self.assertIn("runtime error: signed integer overflow", str(caught.exception))

    def test_a_report_that_a_test_swallowed_still_fails_the_run(self):
        code = ("import harness, unittest\n"
                "try:\n"
                "    raise AssertionError(harness._record_sanitizer_report('x', %r))\n"
                "except AssertionError:\n"
                "    pass  # swallowed, as in a thread\n" % LEAK_REPORT)
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                timeout=30, cwd=os.path.dirname(os.path.abspath(harness.__file__)))
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("1 sanitizer report(s): failing the run", result.stderr)

    def test_the_report_finder(self):
        self.assertIsNone(harness.sanitizer_report("[info] listening\n[warn] slow request\n"))
        found = harness.sanitizer_report("[info] a\n==1==ERROR: AddressSanitizer: heap-use-after"
                                         "-free on address 0x1\n#0 0x2 in f\n")
        self.assertTrue(found.startswith("==1==ERROR: AddressSanitizer: heap-use-after-free"))


if __name__ == "__main__":
    unittest.main()

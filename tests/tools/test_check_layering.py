"""Self-test of check_layering.py on small trees made in a temporary folder."""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def run(files, rules="util:\ndomain: util\npipeline: domain util\n"):
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "tests"))
        with open(os.path.join(root, "tests", "layering.txt"), "w") as f:
            f.write(rules)
        for path, text in files.items():
            full = os.path.join(root, "src", path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(text)
        p = subprocess.run([sys.executable, os.path.join(HERE, "check_layering.py"), root],
                           capture_output=True, text=True, timeout=60)
        return p.returncode, p.stdout


class CheckLayeringTest(unittest.TestCase):
    def test_allowed_includes_pass(self):
        code, out = run({"util/a.hpp": "", "domain/b.hpp": '#include "util/a.hpp"\n',
                         "pipeline/c.cpp": '#include "domain/b.hpp"\n#include "pipeline/d.hpp"\n'
                                           '#include <vector>\n#include "gtest.h"\n'})
        self.assertEqual(code, 0, out)
        self.assertIn("3 includes checked, 0 forbidden", out)

    def test_a_forbidden_include_fails_and_is_named(self):
        code, out = run({"util/a.hpp": "", "domain/b.hpp": "",
                         "util/bad.cpp": '#include "domain/b.hpp"\n'})
        self.assertEqual(code, 1)
        self.assertIn("src/util/bad.cpp:1: util may not include domain/b.hpp", out)

    def test_a_layer_missing_from_the_rules_fails(self):
        code, out = run({"newlayer/x.cpp": ""})
        self.assertEqual(code, 1)
        self.assertIn("layer 'newlayer' is missing", out)


if __name__ == "__main__":
    unittest.main()

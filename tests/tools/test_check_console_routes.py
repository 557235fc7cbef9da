"""Self-test of check_console_routes.py on a small made-up repository."""

import os
import tempfile
import unittest

import check_console_routes as checker

TABLE = """# comment
GET /api/v1/system/info none
DELETE /api/v1/webhooks/{webhook_id} either
"""


def doc(rows):
    head = "# HTTP API\n\n## LangBot 4.9.5's console: every route it calls\n\n| | route | |\n|---|---|---|\n"
    return head + "".join(rows) + "\n## Next section\n| ✓ | `GET /not/checked` | here |\n"


class CheckConsoleRoutesTest(unittest.TestCase):

    def problems(self, rows):
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(root + "/tests")
            os.makedirs(root + "/docs")
            with open(root + "/tests/route_auth_table.txt", "w") as f:
                f.write(TABLE)
            with open(root + "/docs/api.md", "w") as f:
                f.write(doc(rows))
            return [p for p in checker.check(root) if "expected the whole list" not in p]

    def test_ticked_served_routes_pass_whatever_their_parameter_names(self):
        self.assertEqual(self.problems([
            "| ✓ | `GET /system/info` | public |\n",
            "| ✓ | `DELETE /webhooks/{id}` | |\n",
            "| ✗ | `POST /mcp/install/github` | not offered: fetches arbitrary code |\n"]), [])

    def test_each_kind_of_lie_is_caught(self):
        problems = self.problems([
            "| ✓ | `GET /monitoring/overview` | |\n",
            "| ✗ | `GET /system/info` | served after all |\n",
            "| ✗ | `POST /user/bind-space` | |\n",
            "| ✓ | `GET /system/info?x=1` | twice |\n"])
        self.assertEqual(len(problems), 4, problems)
        self.assertIn("ticked but no route serves it", problems[0])
        self.assertIn("is served: tick it", problems[1])
        self.assertIn("say why", problems[2])
        self.assertIn("listed twice", problems[3])

    def test_a_missing_list_is_a_problem(self):
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(root + "/tests")
            os.makedirs(root + "/docs")
            open(root + "/tests/route_auth_table.txt", "w").write(TABLE)
            open(root + "/docs/api.md", "w").write("# HTTP API\n")
            self.assertTrue(any("expected the whole list" in p for p in checker.check(root)))


if __name__ == "__main__":
    unittest.main()

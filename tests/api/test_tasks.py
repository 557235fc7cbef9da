"""Task polling: GET /api/v1/system/tasks and /tasks/{id}."""

import unittest

from harness import ServerTestCase


class TasksTest(ServerTestCase):

    def test_list_is_empty_on_a_new_instance(self):
        for kw in ({"token": self.token}, {"api_key": self.api_key}):
            status, body, _ = self.req("GET", "/api/v1/system/tasks", **kw)
            data = self.assertOk(status, body)
            self.assertEqual(data, {"tasks": []})

    def test_list_filters(self):
        for query in ("?type=plugin", "?kind=install", "?type=plugin&kind=upgrade", "?type="):
            with self.subTest(query):
                data = self.ok("GET", "/api/v1/system/tasks" + query)
                self.assertIsInstance(data["tasks"], list)

    def test_get_unknown_task_is_404(self):
        for tid in ("1", "999999"):
            with self.subTest(tid):
                status, body, _ = self.as_user("GET", "/api/v1/system/tasks/" + tid)
                self.assertError(status, body, 404, "task")

    def test_get_bad_task_id_is_400(self):
        for tid in ("abc", "0", "-1", "1.5", "99999999999999999999999"):
            with self.subTest(tid):
                status, body, _ = self.as_user("GET", "/api/v1/system/tasks/" + tid)
                self.assertError(status, body, 400, "task_id")


if __name__ == "__main__":
    unittest.main()

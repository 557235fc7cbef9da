"""API keys: /api/v1/apikeys CRUD (user token only) and using a key as a credential."""

import unittest

from harness import API_KEY_RE, ServerTestCase

KEY_FIELDS = {"id", "name", "description", "key", "created_at", "updated_at"}
PROBE = "/api/v1/provider/providers"  # an "either" route


class ApiKeyTest(ServerTestCase):

    def create(self, name="k", description=None):
        body = {"name": name}
        if description is not None:
            body["description"] = description
        return self.ok("POST", "/api/v1/apikeys", body)["key"]

    def test_create_shows_full_key_once(self):
        key = self.create("ci", "for the CI job")
        self.assertTrue(KEY_FIELDS <= set(key), key)
        self.assertRegex(key["key"], API_KEY_RE)
        self.assertEqual(len(key["key"]), 4 + 43)
        self.assertEqual(key["name"], "ci")
        self.assertEqual(key["description"], "for the CI job")
        self.assertIsInstance(key["id"], int)
        self.assertTimestamp(key["created_at"])
        self.assertTimestamp(key["updated_at"])

        listed = [k for k in self.ok("GET", "/api/v1/apikeys")["keys"] if k["id"] == key["id"]]
        self.assertEqual(len(listed), 1)
        self.assertTrue(KEY_FIELDS <= set(listed[0]), listed[0])
        masked = listed[0]["key"]
        self.assertNotEqual(masked, key["key"])
        self.assertNotIn(key["key"][4:], masked)
        self.assertLess(len(masked.replace("*", "").replace(".", "")), 20, masked)

        one = self.ok("GET", "/api/v1/apikeys/%d" % key["id"])["key"]
        self.assertEqual(one["key"], masked)
        self.assertEqual(one["name"], "ci")

    def test_keys_are_unique(self):
        keys = {self.create("u%d" % i)["key"] for i in range(5)}
        self.assertEqual(len(keys), 5)

    def test_key_works_as_x_api_key_and_bearer(self):
        full = self.create("cred")["key"]
        self.assertOk(*self.req("GET", PROBE, api_key=full)[:2])
        self.assertOk(*self.req("GET", PROBE, token=full)[:2])
        # X-API-Key alone decides when present: a bad key is 401 even with a good bearer.
        status, resp, _ = self.req("GET", PROBE, token=self.token, api_key="lbk_" + "x" * 43)
        self.assertError(status, resp, 401)

    def test_garbage_keys_are_401(self):
        for bad in ("lbk_" + "A" * 43, "lbk_short", "nope", self.api_key[:-1]):
            with self.subTest(bad):
                status, resp, _ = self.req("GET", PROBE, api_key=bad)
                self.assertError(status, resp, 401)
                status, resp, _ = self.req("GET", PROBE, token=bad)
                self.assertError(status, resp, 401)

    def test_update(self):
        key = self.create("before")
        self.ok("PUT", "/api/v1/apikeys/%d" % key["id"], {"name": "after", "description": "d2"})
        one = self.ok("GET", "/api/v1/apikeys/%d" % key["id"])["key"]
        self.assertEqual((one["name"], one["description"]), ("after", "d2"))
        self.ok("PUT", "/api/v1/apikeys/%d" % key["id"], {"description": "d3"})
        one = self.ok("GET", "/api/v1/apikeys/%d" % key["id"])["key"]
        self.assertEqual((one["name"], one["description"]), ("after", "d3"))
        # The key itself still works after a rename.
        self.assertOk(*self.req("GET", PROBE, api_key=key["key"])[:2])

    def test_delete_stops_the_key(self):
        key = self.create("doomed")
        self.assertOk(*self.req("GET", PROBE, api_key=key["key"])[:2])
        self.ok("DELETE", "/api/v1/apikeys/%d" % key["id"])
        for kw in ({"api_key": key["key"]}, {"token": key["key"]}):
            status, resp, _ = self.req("GET", PROBE, **kw)
            self.assertError(status, resp, 401)
        status, resp, _ = self.as_user("GET", "/api/v1/apikeys/%d" % key["id"])
        self.assertError(status, resp, 404)
        status, resp, _ = self.as_user("DELETE", "/api/v1/apikeys/%d" % key["id"])
        self.assertError(status, resp, 404)
        ids = [k["id"] for k in self.ok("GET", "/api/v1/apikeys")["keys"]]
        self.assertNotIn(key["id"], ids)

    def test_errors(self):
        existing = self.create("exists")["id"]
        cases = [
            ("create: malformed JSON", "POST", "/api/v1/apikeys", None, "{", 400, None),
            ("create: array body", "POST", "/api/v1/apikeys", None, "[]", 400, "object"),
            ("create: missing name", "POST", "/api/v1/apikeys", {"description": "x"}, None, 400,
             "name"),
            ("create: empty name", "POST", "/api/v1/apikeys", {"name": ""}, None, 400, "name"),
            ("create: name of wrong type", "POST", "/api/v1/apikeys", {"name": 5}, None, 400,
             "name"),
            ("create: description of wrong type", "POST", "/api/v1/apikeys",
             {"name": "a", "description": {}}, None, 400, "description"),
            ("get: unknown id", "GET", "/api/v1/apikeys/987654", None, None, 404, None),
            ("get: id not an integer", "GET", "/api/v1/apikeys/abc", None, None, 400, "id"),
            ("get: id zero", "GET", "/api/v1/apikeys/0", None, None, 400, "id"),
            ("get: negative id", "GET", "/api/v1/apikeys/-3", None, None, 400, "id"),
            ("put: unknown id", "PUT", "/api/v1/apikeys/987654", {"name": "x"}, None, 404, None),
            ("put: name of wrong type", "PUT", "/api/v1/apikeys/%d" % existing, {"name": []},
             None, 400, "name"),
            ("put: empty name", "PUT", "/api/v1/apikeys/%d" % existing, {"name": ""}, None, 400,
             "name"),
            ("put: malformed JSON", "PUT", "/api/v1/apikeys/%d" % existing, None, "{,}", 400,
             None),
            ("delete: unknown id", "DELETE", "/api/v1/apikeys/987654", None, None, 404, None),
            ("delete: bad id", "DELETE", "/api/v1/apikeys/1x", None, None, 400, "id"),
        ]
        for desc, method, path, body, raw, code, fragment in cases:
            with self.subTest(desc):
                status, resp, _ = self.as_user(method, path, body, raw_body=raw)
                self.assertError(status, resp, code, fragment)

    def test_api_key_cannot_manage_keys(self):
        for method, path in (("GET", "/api/v1/apikeys"), ("POST", "/api/v1/apikeys")):
            status, resp, _ = self.as_key(method, path, {"name": "x"})
            self.assertError(status, resp, 401)


if __name__ == "__main__":
    unittest.main()

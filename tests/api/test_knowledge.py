"""Knowledge bases end to end (issue 17), against the real binary, a fake embeddings server
(deterministic word-hash vectors) and the fake model: LangBot 4.9.5's /knowledge and /files
routes, ingestion of every supported type as tasks, retrieval by vector, full text and hybrid,
failures beside good files, deletes, a restart, bad input, and a pipeline whose local agent
gives the model the passages (visible in the bot's event log)."""

import os
import time
import unittest
import uuid as uuidlib

from harness import ServerTestCase, unknown_uuid
from fake_clients import FakeEmbeddings, FakeProvider, FakeTelegram, wait_until
import knowledge_documents as docs

KB = "/api/v1/knowledge/bases"
ENGINE = "switchboard/builtin"


def multipart(filename, data, field="file", content_type="application/octet-stream"):
    boundary = "----sbtest" + uuidlib.uuid4().hex
    head = ('--%s\r\nContent-Disposition: form-data; name="%s"; filename="%s"\r\n'
            'Content-Type: %s\r\n\r\n' % (boundary, field, filename, content_type)).encode()
    body = head + data + ("\r\n--%s--\r\n" % boundary).encode()
    return body, {"Content-Type": "multipart/form-data; boundary=" + boundary}


class KnowledgeCase(ServerTestCase):
    emb = None
    llm = None
    server_env = {"KNOWLEDGE__MAX_UPLOAD_BYTES": str(4 * 1024 * 1024),
                  "API__BODY_LIMIT_BYTES": str(8 * 1024 * 1024)}

    @classmethod
    def setUpClass(cls):
        cls.emb = FakeEmbeddings()
        cls.llm = FakeProvider()
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.emb.stop()
        cls.llm.stop()

    def setUp(self):
        self.emb.reset()
        self.llm.reset()

    # ---- helpers ---------------------------------------------------------------------------

    def embedding_model(self, name="embed-test"):
        provider = self.make_provider(name="emb", base_url=self.emb.base_url,
                                      api_keys=[self.emb.api_key])
        return self.make_model(provider, kind="embedding", name=name)

    def base(self, model=None, name="kb", creation=None, retrieval=None):
        creation_settings = {"embedding_model_uuid": model or self.embedding_model()}
        creation_settings.update(creation or {})
        body = {"name": name, "description": "test base", "knowledge_engine_plugin_id": ENGINE,
                "creation_settings": creation_settings,
                "retrieval_settings": retrieval or {"score_threshold": 0}}
        uuid = self.ok("POST", KB, body)["uuid"]
        self.assertUuid(uuid)
        return uuid

    def upload(self, name, data, path="/api/v1/files/documents"):
        body, headers = multipart(name, data)
        status, resp, _ = self.as_user("POST", path, raw_body=body, headers=headers)
        self.assertOk(status, resp)
        return resp["data"]["file_id" if path.endswith("documents") else "file_key"]

    def add(self, kb, name, data):
        """Uploads and adds a file; returns (task id, file uuid)."""
        file_id = self.upload(name, data)
        task = self.ok("POST", "%s/%s/files" % (KB, kb), {"file_id": file_id})["task_id"]
        files = self.ok("GET", "%s/%s/files" % (KB, kb))["files"]
        match = [f for f in files if f["file_name"] == file_id]
        self.assertEqual(len(match), 1, files)
        return task, match[0]["uuid"]

    def settle(self, kb, timeout=60):
        """Waits until no file of `kb` is pending or processing; returns files by uuid."""
        def done():
            files = self.ok("GET", "%s/%s/files" % (KB, kb))["files"]
            busy = [f for f in files if f["status"] in ("pending", "processing")]
            return None if busy else {f["uuid"]: f for f in files}
        files = wait_until(done, timeout, 0.1)
        self.assertIsNotNone(files, "files still being ingested")
        return files

    def retrieve(self, kb, query, **settings):
        return self.ok("POST", "%s/%s/retrieve" % (KB, kb),
                       {"query": query, "retrieval_settings": settings})["results"]

    def text_of(self, hit):
        return "".join(c["text"] for c in hit["content"] if c["type"] == "text")


class KnowledgeRoutesTest(KnowledgeCase):

    def test_engine_schemas_parsers_and_migration_in_langbot_shapes(self):
        engines = self.ok("GET", "/api/v1/knowledge/engines")["engines"]
        self.assertEqual([e["plugin_id"] for e in engines], [ENGINE])
        self.assertIn("doc_ingestion", engines[0]["capabilities"])
        creation = self.ok("GET", "/api/v1/knowledge/engines/%s/creation-schema" % ENGINE)["schema"]
        fields = {f["name"]: f for f in creation}
        self.assertEqual(fields["embedding_model_uuid"]["type"], "embedding-model-selector")
        self.assertTrue(fields["embedding_model_uuid"]["required"])
        self.assertEqual([o["name"] for o in fields["index_type"]["options"]],
                         ["chunk", "parent_child"])
        self.assertEqual((fields["chunk_size"]["default"], fields["overlap"]["default"],
                          fields["parent_chunk_size"]["default"],
                          fields["child_chunk_size"]["default"]), (512, 50, 2048, 256))
        retrieval = self.ok("GET",
                            "/api/v1/knowledge/engines/%s/retrieval-schema" % ENGINE)["schema"]
        fields = {f["name"]: f for f in retrieval}
        self.assertEqual(fields["top_k"]["default"], 5)
        self.assertEqual(fields["search_type"]["default"], "hybrid")
        self.assertEqual(fields["vector_weight"]["default"], 0.7)
        self.assertIn("score_threshold", fields)
        # LangBot's own engine id is served by ours (scripts and imports written for LangBot).
        self.assertTrue(self.ok("GET", "/api/v1/knowledge/engines/langbot-team/LangRAG/"
                                       "creation-schema")["schema"])
        self.assertEqual(self.ok("GET", "/api/v1/knowledge/engines/x/y/creation-schema")["schema"],
                         [])

        parsers = self.ok("GET", "/api/v1/knowledge/parsers?mime_type=application/pdf")["parsers"]
        self.assertEqual(len(parsers), 1)
        self.assertIn("application/pdf", parsers[0]["supported_mime_types"])
        self.assertEqual(self.ok("GET", "/api/v1/knowledge/parsers?mime_type=image/png")["parsers"],
                         [])

        status = self.ok("GET", "/api/v1/knowledge/migration/status")
        self.assertEqual(status, {"needed": False, "internal_kb_count": 0, "external_kb_count": 0})
        s, body, _ = self.as_user("POST", "/api/v1/knowledge/migration/execute", {})
        self.assertError(s, body, 400, "not needed")
        s, body, _ = self.as_user("POST", "/api/v1/knowledge/migration/dismiss", {})
        self.assertError(s, body, 400, "not needed")

    def test_base_crud_and_validation(self):
        model = self.embedding_model()
        kb = self.base(model, name="Manuals")
        base = self.ok("GET", "%s/%s" % (KB, kb))["base"]
        self.assertEqual(base["name"], "Manuals")
        self.assertEqual(base["knowledge_engine_plugin_id"], ENGINE)
        self.assertEqual(base["knowledge_engine"]["plugin_id"], ENGINE)
        self.assertEqual(base["creation_settings"]["embedding_model_uuid"], model)
        self.assertTimestamp(base["created_at"])
        self.assertIn(kb, [b["uuid"] for b in self.ok("GET", KB)["bases"]])
        self.ok("PUT", "%s/%s" % (KB, kb), {"name": "Handbooks",
                                            "retrieval_settings": {"top_k": 3}})
        base = self.ok("GET", "%s/%s" % (KB, kb))["base"]
        self.assertEqual((base["name"], base["retrieval_settings"]), ("Handbooks", {"top_k": 3}))

        bad = [({"name": "x"}, "knowledge_engine_plugin_id"),
               ({"knowledge_engine_plugin_id": "someone/Else"}, "not found"),
               ({"knowledge_engine_plugin_id": ENGINE}, "embedding_model_uuid"),
               ({"knowledge_engine_plugin_id": ENGINE,
                 "creation_settings": {"embedding_model_uuid": unknown_uuid()}}, "not found"),
               ({"knowledge_engine_plugin_id": ENGINE,
                 "creation_settings": {"embedding_model_uuid": model, "chunk_size": 10}},
                "chunk_size"),
               ({"knowledge_engine_plugin_id": ENGINE,
                 "creation_settings": {"embedding_model_uuid": model, "index_type": "qa"}},
                "index_type"),
               ({"knowledge_engine_plugin_id": ENGINE,
                 "creation_settings": {"embedding_model_uuid": model},
                 "retrieval_settings": {"search_type": "psychic"}}, "search_type")]
        for body, fragment in bad:
            s, resp, _ = self.as_user("POST", KB, body)
            self.assertError(s, resp, 400, fragment)
        for method in ("GET", "DELETE"):
            s, resp, _ = self.as_user(method, "%s/%s" % (KB, unknown_uuid()))
            self.assertError(s, resp, 404)
        s, resp, _ = self.as_user("GET", KB + "/not-a-uuid")
        self.assertError(s, resp, 404)
        s, resp, _ = self.req("GET", KB)
        self.assertEqual(s, 401)

    def test_every_type_is_ingested_and_found_by_a_word_only_it_contains(self):
        kb = self.base()
        files = {
            "notes.txt": docs.make_text(["Plain notes mention the zanzibarite mineral."]),
            "guide.md": docs.make_markdown("Guide", ["The **quokkafield** stadium is *large*."]),
            "page.html": docs.make_html("Page", ["Visitors love the brontovale museum."],
                                        noise=True),
            "report.pdf": docs.make_pdf(["Quarterly report about the xylophant project."]),
            "memo.docx": docs.make_docx(["The memo covers the glimmerbeck bridge."]),
        }
        tasks = {}
        for name, data in files.items():
            tasks[name] = self.add(kb, name, data)
        got = self.settle(kb)
        for name, (task, file_uuid) in tasks.items():
            self.assertEqual(got[file_uuid]["status"], "completed", got[file_uuid])
            self.assertGreater(got[file_uuid]["chunk_count"], 0)
            t = self.ok("GET", "/api/v1/system/tasks/%d" % task)["task"]
            self.assertEqual(t["status"], "succeeded", t)
            self.assertEqual(t["task_context"]["metadata"]["embedded"],
                             t["task_context"]["metadata"]["chunks"])
        for word, name in (("zanzibarite", "notes"), ("quokkafield", "guide"),
                           ("brontovale", "page"), ("xylophant", "report"),
                           ("glimmerbeck", "memo")):
            for search in ("hybrid", "full_text", "vector"):
                hits = self.retrieve(kb, word, search_type=search, top_k=1)
                self.assertEqual(len(hits), 1, (word, search, hits))
                self.assertTrue(hits[0]["metadata"]["document_name"].startswith(name),
                                (word, search, hits[0]["metadata"]))
                self.assertIn(word, self.text_of(hits[0]))
                self.assertGreaterEqual(hits[0]["score"], 0)
        # HTML noise (script, style, comments) is not text.
        for marker in docs.HTML_NOISE_MARKERS:
            self.assertEqual(self.retrieve(kb, marker, search_type="full_text"), [], marker)

    def test_a_unique_sentence_in_the_middle_of_a_200_kb_document(self):
        kb = self.base()
        filler = ["Paragraph %d talks about ordinary things like weather, tea and trains."
                  % i for i in range(2900)]
        filler.insert(1450, "The secret rendezvous is at the old lighthouse on Kestrel Point.")
        data = docs.make_text(filler)
        self.assertGreater(len(data), 200 * 1024)
        _, file_uuid = self.add(kb, "big.txt", data)
        files = self.settle(kb, timeout=120)
        self.assertEqual(files[file_uuid]["status"], "completed", files[file_uuid])
        hits = self.retrieve(kb, "Where is the secret rendezvous lighthouse?", top_k=3)
        self.assertTrue(hits)
        self.assertIn("old lighthouse on Kestrel Point", self.text_of(hits[0]))
        # Embedded in batches, not one call per passage.
        calls = self.emb.calls()
        self.assertGreater(max(calls["batch_sizes"]), 1)

    def test_failed_files_beside_good_ones(self):
        kb = self.base()
        self.emb.fail(marker="POISONPILL", status=400)
        cases = {
            "broken.pdf": (docs.corrupt_pdf(), "PDF"),
            "loop.pdf": (docs.looping_pdf(), None),  # either text or a clear reason, in time
            "bomb.docx": (docs.zip_bomb_docx(inflated_mb=128), "MiB"),
            "empty.docx": (docs.docx_without_document(), "DOCX"),
            "picture.xyz": (b"\x00\x01\x02", "unsupported file type"),
            "poison.txt": (docs.make_text(["POISONPILL is in this file."]), "embedding"),
        }
        ids = {name: self.add(kb, name, data) for name, (data, _) in cases.items()}
        _, good = self.add(kb, "good.txt", docs.make_text(["The good file holds the word "
                                                           "fernwhistle."]))
        files = self.settle(kb, timeout=90)
        self.assertEqual(files[good]["status"], "completed", files[good])
        for name, (task, file_uuid) in ids.items():
            f = files[file_uuid]
            fragment = cases[name][1]
            if fragment is None:
                self.assertIn(f["status"], ("completed", "failed"), f)
                continue
            self.assertEqual(f["status"], "failed", (name, f))
            self.assertIn(fragment.lower(), f["error"].lower(), (name, f))
            t = self.ok("GET", "/api/v1/system/tasks/%d" % task)["task"]
            self.assertEqual(t["status"], "failed", t)
            self.assertEqual(t["runtime"]["exception"], f["error"], t)
        hits = self.retrieve(kb, "fernwhistle")
        self.assertEqual(hits[0]["metadata"]["file_id"], good)

    def test_delete_a_file_then_the_base(self):
        kb = self.base()
        _, keep = self.add(kb, "keep.txt", docs.make_text(["Keep the quillbramble here."]))
        _, drop = self.add(kb, "drop.txt", docs.make_text(["Drop the snorkelwisp now."]))
        self.settle(kb)
        self.assertTrue(self.retrieve(kb, "snorkelwisp", search_type="full_text"))
        self.ok("DELETE", "%s/%s/files/%s" % (KB, kb, drop))
        self.assertEqual(self.retrieve(kb, "snorkelwisp", search_type="full_text"), [])
        for hit in self.retrieve(kb, "snorkelwisp", search_type="vector", top_k=10):
            self.assertNotEqual(hit["metadata"]["file_id"], drop)
        self.assertEqual([f["uuid"] for f in self.ok("GET", "%s/%s/files" % (KB, kb))["files"]],
                         [keep])
        s, body, _ = self.as_user("DELETE", "%s/%s/files/%s" % (KB, kb, drop))
        self.assertError(s, body, 404)
        self.ok("DELETE", "%s/%s" % (KB, kb))
        for path in ("%s/%s" % (KB, kb), "%s/%s/files" % (KB, kb)):
            s, body, _ = self.as_user("GET", path)
            self.assertError(s, body, 404)
        s, body, _ = self.as_user("POST", "%s/%s/retrieve" % (KB, kb), {"query": "quillbramble"})
        self.assertError(s, body, 404)

    def test_hybrid_finds_an_exact_code_the_embedding_misses(self):
        kb = self.base(self.embedding_model("embed-test-random"))
        lines = ["Routine line number %d about nothing in particular." % i for i in range(60)]
        lines.insert(30, "The vault code is ZQ-7781-K and nobody should share it.")
        self.add(kb, "codes.txt", docs.make_text(lines))
        self.settle(kb)
        hits = self.retrieve(kb, "ZQ-7781-K", top_k=3, score_threshold=0.2)
        self.assertTrue(hits)
        self.assertIn("ZQ-7781-K", self.text_of(hits[0]))
        self.assertGreater(hits[0]["metadata"]["keyword_score"], 0)
        # The embedding alone misses it: no vector hit scores above the threshold.
        self.assertEqual(self.retrieve(kb, "ZQ-7781-K", search_type="vector",
                                       score_threshold=0.3), [])

    def test_parent_child_returns_the_parent(self):
        kb = self.base(creation={"index_type": "parent_child", "parent_chunk_size": 600,
                                 "child_chunk_size": 120, "overlap": 10})
        paragraphs = ["Section %d. " % i + "Filler words repeat here. " * 12 for i in range(6)]
        paragraphs[3] = "Section 3. The emerald tortoise sleeps in the garden. " + \
            "Filler words repeat here. " * 12
        self.add(kb, "sections.txt", docs.make_text(paragraphs))
        self.settle(kb)
        hits = self.retrieve(kb, "emerald tortoise", top_k=2)
        self.assertIn("emerald tortoise", self.text_of(hits[0]))
        self.assertGreater(len(self.text_of(hits[0])), 200)  # the parent, not a 120-char child

    def test_changing_the_embedding_model_needs_a_reembed(self):
        self.emb.configure(models=["embed-test", "embed-test-random", "embed-test-alt"])
        first = self.embedding_model("embed-test")
        second = self.embedding_model("embed-test-alt")
        kb = self.base(first)
        self.add(kb, "a.txt", docs.make_text(["The marmalade comet returns every spring."]))
        self.settle(kb)
        s, body, _ = self.as_user("PUT", "%s/%s" % (KB, kb),
                                  {"creation_settings": {"embedding_model_uuid": second}})
        self.assertError(s, body, 409, "reembed")
        data = self.ok("PUT", "%s/%s" % (KB, kb),
                       {"creation_settings": {"embedding_model_uuid": second}, "reembed": True})
        task = data["task_id"]

        def finished():
            t = self.ok("GET", "/api/v1/system/tasks/%d" % task)["task"]
            return t if t["status"] in ("succeeded", "failed") else None
        t = wait_until(finished, 30)
        self.assertEqual(t["status"], "succeeded", t)
        base = self.ok("GET", "%s/%s" % (KB, kb))["base"]
        self.assertEqual(base["creation_settings"]["embedding_model_uuid"], second)
        used = {c["model"] for c in self.emb.calls()["calls"]}
        self.assertIn("embed-test-alt", used)
        hits = self.retrieve(kb, "marmalade comet", search_type="vector")
        self.assertIn("marmalade", self.text_of(hits[0]))

    def test_retrieval_survives_a_restart(self):
        kb = self.base()
        self.add(kb, "persist.txt", docs.make_text(["The durable pelicanquartz stays put."]))
        self.settle(kb)
        self.srv.restart()
        for search in ("vector", "hybrid", "full_text"):
            hits = self.retrieve(kb, "pelicanquartz", search_type=search)
            self.assertIn("pelicanquartz", self.text_of(hits[0]), search)

    def test_bad_input(self):
        kb = self.base()
        # Over the upload limit: refused, nothing stored.
        body, headers = multipart("huge.txt", b"a" * (4 * 1024 * 1024 + 10))
        s, resp, _ = self.as_user("POST", "/api/v1/files/documents", raw_body=body,
                                  headers=headers)
        self.assertError(s, resp, 413)
        # Not multipart, no file part.
        s, resp, _ = self.as_user("POST", "/api/v1/files/documents", {"file": "x"})
        self.assertError(s, resp, 400, "multipart")
        # Names with paths, dots and control characters are made safe.
        key = self.upload("../../etc/\x01pass\x7fwd..txt", b"just text")
        self.assertNotIn("/", key)
        self.assertNotIn("..", key)
        self.assertFalse(any(ord(c) < 32 or ord(c) == 127 for c in key), key)
        self.assertTrue(key.endswith(".txt"), key)
        data_dir = self.srv.data_dir
        stored = os.listdir(os.path.join(data_dir, "files", "documents"))
        self.assertIn(key, stored)
        # Adding: an unknown file, no file id, a path as file id, an unknown parser.
        for body, status, fragment in (({"file_id": "nope.txt"}, 404, "not found"),
                                       ({}, 400, "File ID is required"),
                                       ({"file_id": "../config.yaml"}, 404, "not found"),
                                       ({"file_id": key, "parser_plugin_id": "a/b"}, 400,
                                        "parser")):
            s, resp, _ = self.as_user("POST", "%s/%s/files" % (KB, kb), body)
            self.assertError(s, resp, status, fragment)
        # Retrieval: empty query, bad settings, a huge query.
        for body, fragment in (({"query": "  "}, "Query is required"),
                               ({"query": "x", "retrieval_settings": {"top_k": 0}}, "top_k"),
                               ({"query": "x", "retrieval_settings": {"vector_weight": 2}},
                                "vector_weight"),
                               ({"query": "x" * 5000}, "longer")):
            s, resp, _ = self.as_user("POST", "%s/%s/retrieve" % (KB, kb), body)
            self.assertError(s, resp, 400, fragment)
        # Images: the key is checked before any path is built.
        png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
        image = self.upload("logo.png", png, path="/api/v1/files/images")
        s, got, headers = self.req("GET", "/api/v1/files/image/" + image)
        self.assertEqual(s, 200)
        self.assertEqual(headers["content-type"], "image/png")
        for bad in ("..%2Fconfig.yaml", "..", "%2Fetc%2Fpasswd", "nope.png"):
            s, _, _ = self.req("GET", "/api/v1/files/image/" + bad)
            self.assertEqual(s, 404, bad)
        body, headers = multipart("script.svg", b"<svg/>")
        s, resp, _ = self.as_user("POST", "/api/v1/files/images", raw_body=body, headers=headers)
        self.assertError(s, resp, 400, "format")


class KnowledgePipelineTest(KnowledgeCase):
    tg = None

    @classmethod
    def setUpClass(cls):
        cls.tg = FakeTelegram()
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.tg.stop()

    def test_a_bot_on_a_pipeline_with_the_base_gives_the_model_its_passages(self):
        model = self.embedding_model()
        kb = self.base(model, retrieval={"score_threshold": 0.25})
        self.add(kb, "handbook.md", docs.make_markdown("Handbook", [
            "The office wifi password is heliotrope-42.",
            "Lunch is served at noon in the atrium."]))
        self.settle(kb)
        # A second base of the same embedding model: the message is embedded once for both.
        other = self.base(model, name="other", retrieval={"score_threshold": 0.25})
        self.add(other, "garden.txt", docs.make_text(["The garden gate is painted green."]))
        self.settle(other)
        provider = self.make_provider(base_url=self.llm.base + "/v1", api_keys=["sk-good-1"])
        llm_model = self.make_model(provider, name="gpt-test")
        pipe = self.make_pipeline(name="rag", config={
            "ai": {"local-agent": {"model": {"primary": llm_model, "fallbacks": []},
                                   "knowledge-bases": [kb, other]}},
            "output": {"misc": {"quote-origin": False}}})
        token = "777:TESTtoken_kb"
        bot = self.make_bot(adapter="telegram", enable=True, use_pipeline_uuid=pipe,
                            config={"token": token, "api_base_url": self.tg.base,
                                    "markdown_card": False})
        self.addCleanup(lambda: self.as_user("DELETE", "/api/v1/platform/bots/" + bot))
        wait_until(lambda: self.ok("GET", "/api/v1/platform/bots/" + bot)["bot"]["runtime"]
                   ["status"] == "running", 10)

        def say(text, message_id):
            self.tg.push(token, {"message": {
                "message_id": message_id, "date": int(time.time()),
                "chat": {"id": 1001, "type": "private", "first_name": "Ann"},
                "from": {"id": 1001, "is_bot": False, "first_name": "Ann"}, "text": text}})

        say("What is the office wifi password?", 1)
        requests = wait_until(lambda: self.llm.chat_requests() or None, 15)
        self.assertTrue(requests)
        sent = requests[-1]["body"]["messages"][-1]["content"]
        sent = sent if isinstance(sent, str) else "".join(p.get("text", "") for p in sent)
        self.assertIn("heliotrope-42", sent)
        self.assertIn("handbook", sent)           # the source file is named
        self.assertIn("What is the office wifi password?", sent)
        query_calls = [c for c in self.emb.calls()["calls"]
                       if "What is the office wifi password?" in c["inputs"]]
        self.assertEqual(len(query_calls), 1, query_calls)

        def logs():
            return self.ok("POST", "/api/v1/platform/bots/%s/logs" % bot,
                           {"from_index": -1, "max_count": 200})["logs"]
        entry = wait_until(lambda: [l for l in logs() if "knowledge:" in l["text"]], 10)
        self.assertTrue(entry, logs())
        self.assertIn("handbook", entry[0]["text"])

        # Nothing relevant: the model gets the message as written, and the log says why.
        self.llm.reset()
        say("zzz qqq", 2)
        requests = wait_until(lambda: self.llm.chat_requests() or None, 15)
        sent = requests[-1]["body"]["messages"][-1]["content"]
        sent = sent if isinstance(sent, str) else "".join(p.get("text", "") for p in sent)
        self.assertEqual(sent, "zzz qqq")
        self.assertTrue(wait_until(lambda: [l for l in logs() if "no passage" in l["text"]], 10))


if __name__ == "__main__":
    unittest.main()

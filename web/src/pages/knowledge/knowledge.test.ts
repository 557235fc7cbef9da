import { describe, expect, it } from "vitest";
import type { SchemaItem } from "../../api/types";
import { storedBases, toggleBase } from "../pipelines/KnowledgeBasesField";
import { draftOf, embeddingChanged, passageText, requestBody, scoreOf, visibleSettings } from "./knowledge";
import type { KnowledgeBase, KnowledgeEngine } from "./types";

const label = { en_US: "x" };
// The built-in engine's forms as the server describes them (src/services/knowledge_engine.cpp).
const engine: KnowledgeEngine = {
  plugin_id: "switchboard/builtin",
  name: "built-in",
  creation_schema: [
    { name: "embedding_model_uuid", type: "embedding-model-selector", label, required: true, default: "" },
    { name: "index_type", type: "select", label, default: "chunk" },
    { name: "chunk_size", type: "integer", label, default: 512, show_if: { field: "index_type", operator: "eq", value: "chunk" } },
    { name: "overlap", type: "integer", label, default: 50 },
    { name: "child_chunk_size", type: "integer", label, default: 256, show_if: { field: "index_type", operator: "eq", value: "parent_child" } },
  ] as SchemaItem[],
  retrieval_schema: [
    { name: "top_k", type: "integer", label, default: 5 },
    { name: "score_threshold", type: "float", label, default: 0.2 },
  ] as SchemaItem[],
};

const base: KnowledgeBase = {
  uuid: "b1",
  name: "Manuals",
  description: "",
  emoji: "📘",
  knowledge_engine_plugin_id: "switchboard/builtin",
  creation_settings: { embedding_model_uuid: "m1", index_type: "parent_child", child_chunk_size: 200 },
  retrieval_settings: { top_k: 3 },
  created_at: "",
  updated_at: "",
};

describe("knowledge base form", () => {
  it("starts a new base from the engine's defaults", () => {
    const d = draftOf(engine);
    expect(d.engine).toBe("switchboard/builtin");
    expect(d.creation).toEqual({ embedding_model_uuid: "", index_type: "chunk", chunk_size: 512, overlap: 50, child_chunk_size: 256 });
    expect(d.retrieval).toEqual({ top_k: 5, score_threshold: 0.2 });
  });

  it("edits what a base stores, with defaults for what it lacks", () => {
    const d = draftOf(engine, base);
    expect(d.creation.child_chunk_size).toBe(200);
    expect(d.creation.overlap).toBe(50);
    expect(d.retrieval).toEqual({ top_k: 3, score_threshold: 0.2 });
    expect(d.emoji).toBe("📘");
  });

  it("sends only the fields the form shows, and no emptied number", () => {
    const v = { embedding_model_uuid: "m1", index_type: "chunk", chunk_size: null, overlap: 10, child_chunk_size: 256 };
    expect(visibleSettings(engine.creation_schema, v)).toEqual({ embedding_model_uuid: "m1", index_type: "chunk", overlap: 10 });
  });

  it("names the engine on create only, and asks for re-embedding only when the model changed", () => {
    const created = requestBody({ ...draftOf(engine), name: "  KB  ", creation: { embedding_model_uuid: "m1" } }, engine);
    expect(created.name).toBe("KB");
    expect(created.knowledge_engine_plugin_id).toBe("switchboard/builtin");
    expect(created.reembed).toBeUndefined();

    const same = { ...draftOf(engine, base), reembed: true };
    expect(embeddingChanged(base, same)).toBe(false);
    expect(requestBody(same, engine, base).reembed).toBeUndefined();
    expect(requestBody(same, engine, base).knowledge_engine_plugin_id).toBeUndefined();

    const changed = { ...same, creation: { ...same.creation, embedding_model_uuid: "m2" } };
    expect(embeddingChanged(base, changed)).toBe(true);
    expect(requestBody(changed, engine, base).reembed).toBe(true);
    expect(requestBody({ ...changed, reembed: false }, engine, base).reembed).toBeUndefined();
  });
});

describe("retrieval results", () => {
  it("reads the passage's text parts and its score", () => {
    const r = {
      id: "1",
      content: [{ type: "text", text: "one" }, { type: "image" }, { type: "text", text: "two" }],
      metadata: {},
      score: 0.81,
      distance: 0.19,
    };
    expect(passageText(r)).toBe("one\ntwo");
    expect(scoreOf(r)).toBe(0.81);
    expect(scoreOf({ ...r, score: undefined })).toBeCloseTo(0.81);
    expect(scoreOf({ ...r, score: undefined, distance: undefined })).toBeNull();
  });
});

describe("the pipeline's knowledge bases", () => {
  it("keeps the order of choice and entries it does not know", () => {
    expect(storedBases(["a", 3, "", "b"])).toEqual(["a", "b"]);
    expect(storedBases("a")).toEqual([]);
    expect(toggleBase(["gone", "a"], "b", true)).toEqual(["gone", "a", "b"]);
    expect(toggleBase(["gone", "a", "b"], "a", false)).toEqual(["gone", "b"]);
    expect(toggleBase(["a"], "a", true)).toEqual(["a"]);
  });
});

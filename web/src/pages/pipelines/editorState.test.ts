import { describe, expect, it } from "vitest";
import type { Pipeline } from "../../api/types";
import { draftOf, placeOfError } from "./editorState";
import { modelChoiceOf } from "./ModelFallbackSelector";
import type { PipelineMetadata } from "./types";

const metadata: PipelineMetadata = {
  configs: [
    {
      name: "ai",
      label: { en_US: "AI" },
      stages: [
        {
          name: "local-agent",
          label: { en_US: "Local Agent" },
          config: [
            { name: "max-round", label: { en_US: "Max Round" }, type: "integer", default: 10 },
            { name: "prompt", label: { en_US: "Prompt" }, type: "prompt-editor", default: [] },
          ],
        },
      ],
    },
  ],
};

const pipeline = {
  uuid: "p",
  name: "P",
  description: "",
  emoji: "⚙️",
  config: { ai: { "local-agent": { "max-round": 3, extra: "kept" } } },
  extensions_preferences: { enable_all_plugins: true },
} as unknown as Pipeline;

describe("placeOfError", () => {
  it("finds the stage and field of a config message", () => {
    expect(placeOfError("config.ai.local-agent.max-round must be an integer, not null", metadata)).toEqual({
      kind: "stage",
      section: "ai",
      stage: "local-agent",
      field: "max-round",
    });
    expect(placeOfError("config.ai.local-agent must be an object", metadata)).toEqual({
      kind: "stage",
      section: "ai",
      stage: "local-agent",
      field: undefined,
    });
    expect(placeOfError("config.ai must be an object", metadata)).toEqual({ kind: "section", section: "ai" });
  });

  it("finds the top-level fields and leaves other messages unplaced", () => {
    expect(placeOfError("name must be a non-empty string of at most 255 bytes", metadata)).toEqual({
      kind: "basic",
      field: "name",
    });
    expect(placeOfError("description must be at most 4096 bytes", metadata)).toEqual({
      kind: "basic",
      field: "description",
    });
    expect(placeOfError("pipeline x does not exist", metadata)).toBeUndefined();
    expect(placeOfError("config.unknown.stage.f must be a string, not null", metadata)).toBeUndefined();
  });
});

describe("draftOf", () => {
  it("fills defaults under the stored values and keeps unknown keys", () => {
    const d = draftOf(pipeline, metadata);
    expect(d.config.ai["local-agent"]).toEqual({ "max-round": 3, prompt: [], extra: "kept" });
    expect(d.preferences).toEqual({ enable_all_plugins: true });
  });
});

describe("modelChoiceOf", () => {
  it("reads LangBot's bare uuid and the fallback form", () => {
    expect(modelChoiceOf("m1")).toEqual({ primary: "m1", fallbacks: [] });
    expect(modelChoiceOf({ primary: "m1", fallbacks: ["m2", 3] })).toEqual({ primary: "m1", fallbacks: ["m2"] });
    expect(modelChoiceOf(undefined)).toEqual({ primary: "", fallbacks: [] });
  });
});

// The editor's draft (what the person is editing) built from the stored pipeline and the metadata,
// and where a server refusal belongs: the validation messages name a dotted path
// ("config.ai.local-agent.max-round must be an integer, not null", "name must be a non-empty
// string of at most 255 bytes"; src/services/pipeline_service.cpp, config_schema.cpp).
import type { Pipeline } from "../../api/types";
import { defaultsOf } from "../../components/SchemaForm";
import type { ExtensionsPreferences, PipelineConfig, PipelineMetadata } from "./types";

export interface Draft {
  name: string;
  description: string;
  emoji: string;
  config: PipelineConfig;
  preferences: ExtensionsPreferences;
}

export const basicFields = ["name", "description", "emoji"] as const;
export type BasicField = (typeof basicFields)[number];

// Every stage of the metadata gets its defaults under what is stored, so each field shows the value
// the server will use; keys the metadata does not know are kept as they are.
export function draftOf(pipeline: Pipeline, metadata: PipelineMetadata): Draft {
  const config: PipelineConfig = structuredClone(pipeline.config ?? {}) as PipelineConfig;
  for (const section of metadata.configs) {
    const stored = (config[section.name] ??= {});
    for (const stage of section.stages) {
      stored[stage.name] = { ...defaultsOf(stage.config), ...(stored[stage.name] ?? {}) };
    }
  }
  return {
    name: pipeline.name,
    description: pipeline.description,
    emoji: pipeline.emoji,
    config,
    preferences: structuredClone(pipeline.extensions_preferences ?? {}) as ExtensionsPreferences,
  };
}

export function bodyOf(draft: Draft) {
  return {
    name: draft.name,
    description: draft.description,
    emoji: draft.emoji,
    config: draft.config,
    extensions_preferences: draft.preferences,
  };
}

export type ErrorPlace =
  | { kind: "basic"; field: BasicField }
  | { kind: "stage"; section: string; stage: string; field?: string }
  | { kind: "section"; section: string }
  | { kind: "plugins" };

export function placeOfError(message: string, metadata: PipelineMetadata): ErrorPlace | undefined {
  const m = /^([\w.-]+)\s/.exec(message);
  if (!m) return undefined;
  const path = m[1].split(".");
  if (path.length === 1 && (basicFields as readonly string[]).includes(path[0])) {
    return { kind: "basic", field: path[0] as BasicField };
  }
  if (path[0] === "extensions_preferences") return { kind: "plugins" };
  if (path[0] !== "config" || path.length < 2) return undefined;
  const section = metadata.configs.find((s) => s.name === path[1]);
  if (!section) return undefined;
  if (path.length === 2) return { kind: "section", section: section.name };
  const stage = section.stages.find((s) => s.name === path[2]);
  if (!stage) return { kind: "section", section: section.name };
  return { kind: "stage", section: section.name, stage: stage.name, field: path[3] };
}

export const stageKey = (section: string, stage: string) => `${section}.${stage}`;

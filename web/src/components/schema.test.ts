import { describe, expect, it } from "vitest";
import type { SchemaItem } from "../api/types";
import { defaultsOf, fieldErrorsFrom, isVisible } from "./SchemaForm";

const item = (extra: Partial<SchemaItem>): SchemaItem => ({ name: "x", label: { en_US: "X" }, type: "string", ...extra });

describe("isVisible", () => {
  it("follows show_if eq and neq", () => {
    const eq = item({ show_if: { field: "auth-type", operator: "eq", value: "basic" } });
    expect(isVisible(eq, { "auth-type": "basic" })).toBe(true);
    expect(isVisible(eq, { "auth-type": "jwt" })).toBe(false);
    const neq = item({ show_if: { field: "__system.is_wizard", operator: "neq", value: true } });
    expect(isVisible(neq, {})).toBe(true);
    expect(isVisible(neq, {}, { "__system.is_wizard": true })).toBe(false);
  });

  it("follows visibleOn conjunctions", () => {
    const v = item({ visibleOn: "${enable-webhook} == true && ${PullPendingPlaceholderEnabled} == true" });
    expect(isVisible(v, { "enable-webhook": true, PullPendingPlaceholderEnabled: true })).toBe(true);
    expect(isVisible(v, { "enable-webhook": true, PullPendingPlaceholderEnabled: false })).toBe(false);
    expect(isVisible(v, {})).toBe(false);
  });
});

describe("defaultsOf", () => {
  it("copies defaults so that editing the form never changes the schema", () => {
    const items = [item({ name: "list", type: "array[string]", default: ["a"] }), item({ name: "none" })];
    const values = defaultsOf(items);
    expect(values).toEqual({ list: ["a"] });
    (values.list as string[]).push("b");
    expect(items[0].default).toEqual(["a"]);
  });
});

describe("fieldErrorsFrom", () => {
  it("maps a server message to the field it names under a prefix", () => {
    const msg = "config.ai.local-agent.max-round must be an integer";
    expect(fieldErrorsFrom(msg, "config.ai.local-agent.")).toEqual({ "max-round": msg });
    expect(fieldErrorsFrom(msg, "config.trigger.")).toEqual({});
    expect(fieldErrorsFrom("config.port is required", "config.")).toEqual({ port: "config.port is required" });
    expect(fieldErrorsFrom(undefined)).toEqual({});
  });
});

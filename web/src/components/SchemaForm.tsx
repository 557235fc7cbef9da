// A form generated from LangBot's dynamic-form schema (adapter configs, requester configs, pipeline
// stages, plugin manifests). Controlled: the caller owns the value object. Types the form does not
// know natively (model selectors, webhook URLs, ...) are drawn by `renderCustom`; a type nobody
// draws is shown as JSON rather than hidden, so no setting is ever out of reach.
import { useId, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import type { SchemaItem } from "../api/types";
import { localize } from "../i18n";
import { Field, type FieldControlProps } from "./Field";

export type FormValue = Record<string, unknown>;

export interface SchemaFormProps {
  items: SchemaItem[];
  value: FormValue;
  onChange: (value: FormValue) => void;
  // Errors by field name (the server's message), shown under that field.
  errors?: Record<string, string>;
  renderCustom?: (item: SchemaItem, value: unknown, set: (v: unknown) => void, id: string) => ReactNode | undefined;
  disabled?: boolean;
  // Values of fields outside this form that show_if may name (e.g. "__system.is_wizard").
  context?: Record<string, unknown>;
}

export function defaultsOf(items: SchemaItem[]): FormValue {
  const out: FormValue = {};
  for (const item of items) if (item.default !== undefined) out[item.name] = structuredClone(item.default);
  return out;
}

// LangBot's two visibility rules: show_if {field, operator, value} and visibleOn
// "${a} == true && ${b} == true".
export function isVisible(item: SchemaItem, value: FormValue, context: Record<string, unknown> = {}): boolean {
  const read = (name: string) => (name in value ? value[name] : context[name]);
  if (item.show_if) {
    const actual = read(item.show_if.field);
    const { operator, value: expected } = item.show_if;
    if (operator === "eq" && actual !== expected) return false;
    if (operator === "neq" && actual === expected) return false;
    if (operator === "in" && Array.isArray(expected) && !expected.includes(actual)) return false;
  }
  if (item.visibleOn) {
    for (const clause of item.visibleOn.split("&&")) {
      const m = /\$\{([^}]+)\}\s*(==|!=)\s*(.+)/.exec(clause.trim());
      if (!m) continue;
      let expected: unknown = m[3].trim().replace(/^["']|["']$/g, "");
      if (expected === "true") expected = true;
      else if (expected === "false") expected = false;
      const equal = read(m[1]) === expected;
      if ((m[2] === "==") !== equal) return false;
    }
  }
  return true;
}

const integerTypes = new Set(["integer", "int"]);
const numberTypes = new Set(["float", "number"]);

export function SchemaForm({ items, value, onChange, errors = {}, renderCustom, disabled, context }: SchemaFormProps) {
  const baseId = useId();
  return (
    <div className="schema-form">
      {items
        .filter((item) => isVisible(item, value, context))
        .map((item) => (
          <SchemaField
            key={item.name}
            id={`${baseId}-${item.name}`}
            item={item}
            value={value[item.name]}
            error={errors[item.name]}
            disabled={disabled}
            set={(v) => onChange({ ...value, [item.name]: v })}
            renderCustom={renderCustom}
          />
        ))}
    </div>
  );
}

function SchemaField({
  id,
  item,
  value,
  set,
  error,
  disabled,
  renderCustom,
}: {
  id: string;
  item: SchemaItem;
  value: unknown;
  set: (v: unknown) => void;
  error?: string;
  disabled?: boolean;
  renderCustom?: SchemaFormProps["renderCustom"];
}) {
  const { t, i18n } = useTranslation();
  const boolean = item.type === "boolean";
  // The control for this item's type, tied to the label, help and error by Field's props.
  const control = (field: FieldControlProps): ReactNode => {
    const custom = renderCustom?.(item, value, set, id);
    if (custom !== undefined) return custom;
    const common = { ...field, disabled, required: item.required && !boolean ? true : undefined };
    if (boolean) {
      return <input type="checkbox" {...common} checked={Boolean(value)} onChange={(e) => set(e.target.checked)} />;
    }
    if (item.type === "select") {
      return (
        <select {...common} value={String(value ?? "")} onChange={(e) => set(e.target.value)}>
          {!item.required && <option value="">—</option>}
          {(item.options ?? []).map((o) => (
            <option key={o.name} value={o.name}>
              {localize(o.label, i18n.language) || o.name}
            </option>
          ))}
        </select>
      );
    }
    if (integerTypes.has(item.type) || numberTypes.has(item.type)) {
      return (
        <input
          type="number"
          inputMode={integerTypes.has(item.type) ? "numeric" : "decimal"}
          step={integerTypes.has(item.type) ? 1 : "any"}
          {...common}
          value={value === undefined || value === null ? "" : String(value)}
          onChange={(e) => {
            const raw = e.target.value;
            if (raw === "") return set(null);
            set(integerTypes.has(item.type) ? parseInt(raw, 10) : Number(raw));
          }}
        />
      );
    }
    if (item.type === "array[string]") {
      return (
        <textarea
          {...common}
          rows={3}
          placeholder={t("form.onePerLine")}
          value={Array.isArray(value) ? value.join("\n") : ""}
          onChange={(e) => set(e.target.value.split("\n").filter((line, i, all) => line !== "" || i < all.length - 1))}
          onBlur={(e) => set(e.target.value.split("\n").map((s) => s.trim()).filter(Boolean))}
        />
      );
    }
    if (item.type === "text" || item.type === "textarea") {
      return <textarea {...common} rows={4} value={String(value ?? "")} onChange={(e) => set(e.target.value)} />;
    }
    if (item.type === "string" || item.type === "secret") {
      return (
        <input
          type={item.secret || item.type === "secret" ? "password" : item.format === "http-url" ? "url" : "text"}
          autoComplete={item.secret ? "new-password" : "off"}
          {...common}
          value={String(value ?? "")}
          onChange={(e) => set(e.target.value)}
        />
      );
    }
    return <JsonInput {...common} value={value} set={set} />;
  };
  return (
    <Field
      id={id}
      name={item.name}
      label={localize(item.label, i18n.language) || item.name}
      required={item.required && !boolean}
      checkbox={boolean}
      help={localize(item.description, i18n.language) || undefined}
      error={error}
    >
      {control}
    </Field>
  );
}

// Any value as editable JSON; an unparsable edit is kept as text and flagged, never dropped.
function JsonInput({ value, set, ...rest }: { value: unknown; set: (v: unknown) => void; id: string; disabled?: boolean }) {
  const text = typeof value === "string" ? value : JSON.stringify(value ?? null, null, 2);
  return (
    <textarea
      {...rest}
      rows={4}
      className="mono"
      defaultValue={text}
      onBlur={(e) => {
        try {
          set(JSON.parse(e.target.value));
        } catch {
          set(e.target.value);
        }
      }}
    />
  );
}

// Maps a server validation message ("config.ai.local-agent.max-round must be an integer") to the
// field it names, relative to `prefix` ("config.ai.local-agent."): {"max-round": message}.
export function fieldErrorsFrom(message: string | undefined, prefix = ""): Record<string, string> {
  if (!message) return {};
  const m = /^([\w.\-[\]]+)\s/.exec(message);
  if (!m || !m[1].startsWith(prefix)) return {};
  const rest = m[1].slice(prefix.length).split(/[.[]/)[0];
  return rest ? { [rest]: message } : {};
}

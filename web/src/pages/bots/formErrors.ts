// Where a refused bot save shows its message. The server names the field first
// (src/services/bot_service.cpp, config_schema.cpp, field_reader.cpp): "config.secret is required",
// "config.callback_url must be an http:// or https:// URL", "name must be a non-empty string …",
// "adapter 'x' is not a known adapter …", "use_pipeline_uuid … names no pipeline".
import { ApiError } from "../../api/client";
import { fieldErrorsFrom } from "../../components/SchemaForm";

export type BotField = "name" | "description" | "adapter" | "use_pipeline_uuid" | "log_retention";

export interface BotFormErrors {
  fields: Partial<Record<BotField, string>>;
  config: Record<string, string>;
  // A refusal that names no field on the form: shown above the Save button.
  general?: string;
}

const topFields: BotField[] = ["name", "description", "adapter", "use_pipeline_uuid", "log_retention"];

export function botFormErrors(error: unknown): BotFormErrors {
  const message = error instanceof Error ? error.message : String(error);
  if (!(error instanceof ApiError) || error.status !== 400) return { fields: {}, config: {}, general: message };
  const config = fieldErrorsFrom(message, "config.");
  if (Object.keys(config).length > 0) return { fields: {}, config };
  const named = Object.keys(fieldErrorsFrom(message))[0];
  const field = topFields.find((f) => f === named);
  if (field) return { fields: { [field]: message }, config: {} };
  return { fields: {}, config: {}, general: message };
}

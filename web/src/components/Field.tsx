// One labelled form field: the label (with the required mark beside it, not in it, so the
// accessible name is the label alone), the control, its help and the server's or the form's
// error, wired together with ids. The control is drawn by `children`, which gets the props that
// tie it to the label, help and error.
//   <Field id="key-name" label="Name" required error={e} help="Shown in the list">
//     {(p) => <input {...p} value={name} onChange={...} />}
//   </Field>
import type { ReactNode } from "react";

export interface FieldControlProps {
  id: string;
  "aria-describedby"?: string;
  "aria-invalid"?: true;
}

export function Field({
  id,
  label,
  required,
  help,
  error,
  checkbox,
  name,
  children,
}: {
  id: string;
  label: ReactNode;
  required?: boolean;
  help?: ReactNode;
  error?: string;
  checkbox?: boolean; // the control comes before its label, on one line
  name?: string; // data-field, for scrolling to a field the server named
  children: (props: FieldControlProps) => ReactNode;
}) {
  const helpId = help ? `${id}-help` : undefined;
  const errId = error ? `${id}-err` : undefined;
  const control = children({
    id,
    "aria-describedby": [helpId, errId].filter(Boolean).join(" ") || undefined,
    "aria-invalid": error ? true : undefined,
  });
  const labelRow = (
    <div className="field-label">
      <label htmlFor={id}>{label}</label>
      {required && (
        <span className="required-mark" aria-hidden="true">
          *
        </span>
      )}
    </div>
  );
  return (
    <div className={`field${checkbox ? " field-check" : ""}${error ? " field-invalid" : ""}`} data-field={name}>
      {checkbox ? (
        <>
          {control}
          <label htmlFor={id}>{label}</label>
        </>
      ) : (
        <>
          {labelRow}
          {control}
        </>
      )}
      {help && (
        <p id={helpId} className="field-help">
          {help}
        </p>
      )}
      {error && (
        <p id={errId} className="field-error">
          {error}
        </p>
      )}
    </div>
  );
}

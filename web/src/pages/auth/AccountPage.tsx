import { useState } from "react";
import { useForm } from "react-hook-form";
import { useTranslation } from "react-i18next";
import { api } from "../../api/client";
import { PageHeader } from "../../app/Layout";
import { useAuth } from "../../auth/AuthContext";
import { setToken } from "../../auth/token";
import { FormError } from "../../components/PageState";

interface PasswordForm {
  current_password: string;
  new_password: string;
  confirm: string;
}

// Changing the password ends every other session (the server moves the token generation up), so
// the console signs in again with the new password to keep this one.
export function AccountPage() {
  const { t } = useTranslation("auth");
  const { user } = useAuth();
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const { register, handleSubmit, formState, watch, reset } = useForm<PasswordForm>();
  return (
    <>
      <PageHeader title={t("account.title")}>
        <p className="muted">{user}</p>
      </PageHeader>
      <section className="card narrow">
        <h2>{t("account.changePassword")}</h2>
        <form
          onSubmit={handleSubmit(async (v) => {
            setError(null);
            setSaved(false);
            try {
              await api("/user/change-password", {
                method: "POST",
                body: { current_password: v.current_password, new_password: v.new_password },
              });
              if (user) {
                const data = await api<{ token: string }>("/user/auth", {
                  method: "POST",
                  body: { user, password: v.new_password },
                  anonymous: true,
                });
                setToken(data.token);
              }
              reset();
              setSaved(true);
            } catch (e) {
              setError(e);
            }
          })}
        >
          <div className="field">
            <label htmlFor="pw-current">{t("currentPassword")}</label>
            <input
              id="pw-current"
              type="password"
              autoComplete="current-password"
              required
              {...register("current_password", { required: true })}
            />
          </div>
          <div className="field">
            <label htmlFor="pw-new">{t("newPassword")}</label>
            <input
              id="pw-new"
              type="password"
              autoComplete="new-password"
              required
              minLength={8}
              {...register("new_password", { required: true, minLength: 8 })}
            />
          </div>
          <div className={`field${formState.errors.confirm ? " field-invalid" : ""}`}>
            <label htmlFor="pw-confirm">{t("confirmPassword")}</label>
            <input
              id="pw-confirm"
              type="password"
              autoComplete="new-password"
              required
              {...register("confirm", { validate: (c) => c === watch("new_password") || t("mismatch") })}
            />
            {formState.errors.confirm && <p className="field-error">{formState.errors.confirm.message}</p>}
          </div>
          <FormError error={error} />
          {saved && (
            <p className="notice" role="status">
              {t("account.saved")}
            </p>
          )}
          <button type="submit" className="btn btn-primary" disabled={formState.isSubmitting}>
            {t("save", { ns: "common" })}
          </button>
        </form>
      </section>
    </>
  );
}

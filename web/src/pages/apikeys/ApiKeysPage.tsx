// Placeholder until this page group is built (issue 15).
export default function ApiKeysPage() {
  return <p>ApiKeysPage is not built yet.</p>;
}

// An attached image as a data URL small enough for one WebSocket frame (the server reads at most
// 1 MiB per frame, and base64 adds a third): large pictures are scaled down and re-encoded as JPEG.
const maxDataUrlBytes = 700 * 1024;
const maxSide = 1600;

function readAsDataUrl(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error("read failed"));
    reader.readAsDataURL(file);
  });
}

async function shrink(dataUrl: string): Promise<string> {
  const img = new Image();
  img.src = dataUrl;
  await img.decode();
  for (let side = maxSide, quality = 0.85; side >= 320; side = Math.round(side * 0.7), quality -= 0.1) {
    const scale = Math.min(1, side / Math.max(img.naturalWidth, img.naturalHeight));
    const canvas = document.createElement("canvas");
    canvas.width = Math.max(1, Math.round(img.naturalWidth * scale));
    canvas.height = Math.max(1, Math.round(img.naturalHeight * scale));
    canvas.getContext("2d")!.drawImage(img, 0, 0, canvas.width, canvas.height);
    const out = canvas.toDataURL("image/jpeg", Math.max(0.5, quality));
    if (out.length <= maxDataUrlBytes) return out;
  }
  throw new Error("too large");
}

export async function imageAsDataUrl(file: File): Promise<string> {
  if (!file.type.startsWith("image/")) throw new Error("not an image");
  const dataUrl = await readAsDataUrl(file);
  return dataUrl.length <= maxDataUrlBytes ? dataUrl : shrink(dataUrl);
}

// `npm run openapi`: writes docs/openapi.json, docs/openapi-admin.json and clients/typescript/src/schema.d.ts from the routes.
import fs from 'node:fs';
import path from 'node:path';
import { ADMIN_DOCUMENT_FILE, CLIENT_SCHEMA_FILE, DOCUMENT_FILE, ROOT, generateArtifacts } from './openapi-artifacts.ts';

const { documentText, adminDocumentText, schemaText } = await generateArtifacts();
for (const [file, text] of [
  [DOCUMENT_FILE, documentText],
  [ADMIN_DOCUMENT_FILE, adminDocumentText],
  [CLIENT_SCHEMA_FILE, schemaText],
] as const) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const before = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
  fs.writeFileSync(file, text);
  console.log(`${before === text ? 'unchanged' : 'wrote'} ${path.relative(ROOT, file)}`);
}

// The parts of the AWS SDK that the S3 backup target and the claims' evidence store use
// (backup-targets.ts, evidence-store.ts). They import this module at their first S3 call, not with
// the server (docs/performance.md, "Memory on Node 24"): through a module of ours, so the SDK's
// CommonJS exports are bound by name as a static import binds them.
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, NoSuchKey, NotFound, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';

export const s3Sdk = { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, NoSuchKey, NotFound, S3Client, Upload };

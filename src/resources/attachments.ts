/**
 * `zotero://attachments/{library}/{key}`: one attachment's file (`users/1/ABCD2345`,
 * `groups/5/ABCD2345`), the bytes as they are with the attachment's content type, read from
 * this computer or downloaded from Zotero's cloud storage with the MD5 checked. Embedded only
 * within the answer bound (MAX_RESOURCE_BYTES); a larger file is refused with its size and
 * how to save it. zotero_get_attachment links here for a binary file.
 */
import { defineResourceTemplate } from '../core/resource.js';

export default defineResourceTemplate({
  uriTemplate: 'zotero://attachments/{library}/{key}',
  name: 'attachment',
  title: 'An attachment’s file',
  description:
    'One attachment’s file as bytes (base64 blob with its content type): library is users/<id> or groups/<id> (users/0: the desktop’s own library), key the attachment’s key. Read from this computer when it is there, else downloaded from Zotero’s cloud storage with its MD5 checked against Zotero’s. Only files of at most 75,000 bytes are embedded; for a larger one the read fails saying its size: save it with zotero_get_attachment and save_path. zotero_get_attachment returns this link for a binary file.',
  async read(deps, variables) {
    const { attachmentBytes } = await import('../core/attachments/download.js');
    const file = await attachmentBytes(deps, variables.library ?? '', variables.key ?? '');
    return { mimeType: file.mimeType, bytes: file.bytes };
  },
});

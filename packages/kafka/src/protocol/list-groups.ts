// ListGroups v3-v5 (flexible): the groups a broker coordinates, optionally only those in the given states
// (v4+, KIP-518) or of the given types (v5+, KIP-848), each with its state (v4+) and type (v5+). Kafka's
// schema: clients/src/main/resources/common/message/ListGroups{Request,Response}.json.
import type { KafkaReader, KafkaWriter } from '../binary.js';
import type { FlexibleApi } from './flexible-api.js';

export interface ListGroupsArgs {
  /** Only groups in these states (as the broker names them, case-insensitive); empty: every state. v4+. */
  statesFilter: readonly string[];
  /** Only groups of these types (`classic`, `consumer`, `share`, `streams`); empty: every type. v5+. */
  typesFilter: readonly string[];
}

export interface ListedGroup {
  groupId: string;
  protocolType: string;
  /** Empty below v4, where the broker does not say. */
  groupState: string;
  /** Empty below v5, where the broker does not say. */
  groupType: string;
}

export interface ListGroupsResponse {
  throttleTimeMs: number;
  errorCode: number;
  groups: ListedGroup[];
}

export const ListGroupsApi: FlexibleApi<ListGroupsArgs, ListGroupsResponse> = {
  name: 'ListGroups',
  apiKey: 16,
  versions: [3, 4, 5],
  encode(writer: KafkaWriter, version: number, args: ListGroupsArgs): void {
    if (version >= 4) writer.compactArray(args.statesFilter, (state) => writer.compactNullableString(state));
    if (version >= 5) writer.compactArray(args.typesFilter, (type) => writer.compactNullableString(type));
    writer.taggedFields();
  },
  decode(reader: KafkaReader, version: number): ListGroupsResponse {
    const throttleTimeMs = reader.int32();
    const errorCode = reader.int16();
    const groups = reader.compactArray((r) => {
      const group: ListedGroup = {
        groupId: r.compactString(),
        protocolType: r.compactString(),
        groupState: version >= 4 ? r.compactString() : '',
        groupType: version >= 5 ? r.compactString() : '',
      };
      r.taggedFields();
      return group;
    });
    reader.taggedFields();
    return { throttleTimeMs, errorCode, groups };
  },
};

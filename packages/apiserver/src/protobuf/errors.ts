/** Raised when a request body is not a well-formed kube protobuf envelope. */
export class ProtobufDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ProtobufDecodeError";
  }
}

/** Raised when an object's apiVersion/kind has no protobuf message (e.g. Table, custom resources). */
export class ProtobufUnsupportedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ProtobufUnsupportedError";
  }
}

/** Raised when a JSON value cannot be represented in its protobuf field (e.g. a bad timestamp). */
export class ProtobufEncodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ProtobufEncodeError";
  }
}

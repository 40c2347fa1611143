// A DNS server on loopback that answers a few names with the addresses of a service's ready
// replicas: what a headless Service's name is in a cluster, for the local scale-out (replicas.ts).
// The services' gRPC channels ask it when their address names it (`dns://127.0.0.1:<port>/<name>:<port>`
// and GRPC_NODE_USE_ALTERNATIVE_RESOLVER=true: grpc-js then resolves through c-ares with that server
// instead of getaddrinfo), so nothing of the machine's own resolver or /etc/hosts is touched.
import { createSocket, type Socket } from 'node:dgram';
import { decode, encode, type Answer, type Packet } from 'dns-packet';

/** Answers are never cached: a replica added or removed is seen by the next resolution, as with CoreDNS' short TTLs. */
const TTL_SECONDS = 0;

export class LocalDns {
  private readonly records = new Map<string, string[]>();

  private constructor(
    private readonly socket: Socket,
    readonly host: string,
    readonly port: number,
  ) {
    socket.on('message', (message, remote) => {
      const reply = this.answer(message);
      if (reply) socket.send(reply, remote.port, remote.address);
    });
  }

  /** Listens on `host:port` (UDP; port 0 picks one). */
  static async start(host = '127.0.0.1', port = 0): Promise<LocalDns> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(port, host, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    return new LocalDns(socket, host, socket.address().port);
  }

  /** `dns://<this server>/<name>:<port>`: a gRPC target resolved here. */
  target(name: string, port: number): string {
    return `dns://${this.host}:${this.port}/${name}:${port}`;
  }

  /** What `name` answers from now on (no address: NXDOMAIN, as a headless Service without ready pods). */
  set(name: string, addresses: readonly string[]): void {
    this.records.set(name.toLowerCase(), [...addresses]);
  }

  add(name: string, address: string): void {
    const current = this.records.get(name.toLowerCase()) ?? [];
    if (!current.includes(address)) this.set(name, [...current, address]);
  }

  remove(name: string, address: string): void {
    this.set(name, (this.records.get(name.toLowerCase()) ?? []).filter((a) => a !== address));
  }

  addresses(name: string): readonly string[] {
    return this.records.get(name.toLowerCase()) ?? [];
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }

  private answer(message: Buffer): Buffer | undefined {
    let query: Packet;
    try {
      query = decode(message);
    } catch {
      return undefined; // not DNS: nothing to answer
    }
    const question = query.questions?.[0];
    if (query.type !== 'query' || !question) return undefined;
    const known = this.records.get(question.name.toLowerCase());
    const answers: Answer[] =
      question.type === 'A' && known ? known.map((address) => ({ type: 'A', name: question.name, ttl: TTL_SECONDS, class: 'IN', data: address })) : [];
    // A known name with no A record asked (AAAA, TXT) is NOERROR with no data; an unknown name, or a
    // known one without a ready address, NXDOMAIN.
    const exists = known !== undefined && known.length > 0;
    return encode({
      id: query.id,
      type: 'response',
      flags: 0x8000 /* QR */ | 0x0400 /* AA */ | ((query.flags ?? 0) & 0x0100) /* RD */ | 0x0080 /* RA */ | (exists ? 0 : 3) /* NXDOMAIN */,
      questions: [question],
      answers,
    });
  }
}

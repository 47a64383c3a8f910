// Proves the test environment reaches a real NATS with JetStream: create a stream, publish,
// consume with a durable pull consumer and acknowledge.
#include <nats/nats.h>

#include "services_env.h"

namespace telos {
namespace {

TEST(NatsReachable, PublishConsumeAck) {
  const std::string url = testing::RequireEnv("TELOS_NATS");
  natsConnection* conn = nullptr;
  ASSERT_EQ(natsConnection_ConnectTo(&conn, url.c_str()), NATS_OK) << nats_GetLastError(nullptr);
  jsCtx* js = nullptr;
  ASSERT_EQ(natsConnection_JetStream(&js, conn, nullptr), NATS_OK);

  const std::string stream = testing::UniqueName("REACHABLE");
  const std::string subject = "test." + stream;
  jsStreamConfig config;
  jsStreamConfig_Init(&config);
  config.Name = stream.c_str();
  const char* subjects[] = {subject.c_str()};
  config.Subjects = subjects;
  config.SubjectsLen = 1;
  config.Storage = js_MemoryStorage;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  jsStreamInfo* info = nullptr;
  ASSERT_EQ(js_AddStream(&info, js, &config, nullptr, &jerr), NATS_OK) << "jerr " << jerr;
  jsStreamInfo_Destroy(info);

  for (int i = 0; i < 3; ++i) {
    const std::string payload = "event-" + std::to_string(i);
    jsPubAck* ack = nullptr;
    ASSERT_EQ(js_Publish(&ack, js, subject.c_str(), payload.data(),
                         static_cast<int>(payload.size()), nullptr, &jerr),
              NATS_OK);
    EXPECT_EQ(ack->Sequence, static_cast<uint64_t>(i + 1));
    jsPubAck_Destroy(ack);
  }

  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Config.AckPolicy = js_AckExplicit;
  natsSubscription* sub = nullptr;
  ASSERT_EQ(js_PullSubscribe(&sub, js, subject.c_str(), "reachable", nullptr, &so, &jerr), NATS_OK);
  natsMsgList list = {nullptr, 0};
  ASSERT_EQ(natsSubscription_Fetch(&list, sub, 3, 5000, &jerr), NATS_OK);
  ASSERT_EQ(list.Count, 3);
  for (int i = 0; i < list.Count; ++i) {
    EXPECT_EQ(std::string(natsMsg_GetData(list.Msgs[i]), natsMsg_GetDataLength(list.Msgs[i])),
              "event-" + std::to_string(i));
    EXPECT_EQ(natsMsg_AckSync(list.Msgs[i], nullptr, &jerr), NATS_OK);
  }
  natsMsgList_Destroy(&list);

  jsConsumerInfo* ci = nullptr;
  ASSERT_EQ(js_GetConsumerInfo(&ci, js, stream.c_str(), "reachable", nullptr, &jerr), NATS_OK);
  EXPECT_EQ(ci->AckFloor.Stream, 3u);
  EXPECT_EQ(ci->NumPending, 0u);
  jsConsumerInfo_Destroy(ci);

  natsSubscription_Destroy(sub);
  EXPECT_EQ(js_DeleteStream(js, stream.c_str(), nullptr, &jerr), NATS_OK);
  jsCtx_Destroy(js);
  natsConnection_Destroy(conn);
}

}  // namespace
}  // namespace telos
